package nativebatch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"strata/ingest/middlemanager"
	"strata/interval"
	"strata/segmeta"
)

// inlineTask is an index task over inline data; parts overrides sections.
func inlineTask(data string, dataSchema string, tuning string) []byte {
	if tuning == "" {
		tuning = `{"type":"index"}`
	}
	d, _ := json.Marshal(data)
	return []byte(`{"type":"index","spec":{"dataSchema":` + dataSchema + `,
		"ioConfig":{"type":"index","inputSource":{"type":"inline","data":` + string(d) + `},"inputFormat":{"type":"json"}},
		"tuningConfig":` + tuning + `}}`)
}

const animals = `{"timestamp":"2018-01-01T07:01:35Z","animal":"octopus","location":1,"number":100}
{"timestamp":"2018-01-01T05:01:35Z","animal":"mongoose","location":2,"number":200}
{"timestamp":"2018-01-01T06:01:35Z","animal":"snake","location":3,"number":300}
{"timestamp":"2018-01-01T01:01:35Z","animal":"lion","location":4,"number":300}
`

func TestSchemalessDiscovery(t *testing.T) {
	b := build(t, inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":[],"dimensionExclusions":["location"]},
		"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"total","fieldName":"number"}],
		"granularitySpec":{"queryGranularity":"none","rollup":false}}`, ""))
	if got := b.segs[0].Dimensions; strings.Join(got, ",") != "animal" {
		t.Errorf("dimensions = %v, want [animal] (location excluded, number read by a metric)", got)
	}
	rows := b.rows(t)
	if len(rows) != 4 || sumOf(rows, "total") != 900 {
		t.Errorf("rows = %v", rows)
	}

	// Typed discovery keeps numbers numeric; classic discovery stores strings.
	for _, typed := range []bool{false, true} {
		ds := `{"dataSource":"a","timestampSpec":{"column":"timestamp"},"dimensionsSpec":{"useSchemaDiscovery":` +
			map[bool]string{false: "false", true: "true"}[typed] + `},"granularitySpec":{"rollup":false}}`
		b := build(t, inlineTask(animals, ds, ""))
		if got := strings.Join(b.segs[0].Dimensions, ","); got != "animal,location,number" {
			t.Fatalf("typed=%v: dimensions %s", typed, got)
		}
		rows := b.rows(t)
		loc := rows[0]["location"]
		if _, isLong := loc.(int64); isLong != typed {
			t.Errorf("typed=%v: location stored as %T", typed, loc)
		}
	}
}

func TestTransformsAndFilter(t *testing.T) {
	b := build(t, inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":["animal","location"]},
		"metricsSpec":[{"type":"count","name":"count"},{"type":"longSum","name":"number","fieldName":"number"},
			{"type":"longSum","name":"triple-number","fieldName":"triple-number"}],
		"granularitySpec":{"queryGranularity":"none","segmentGranularity":"day"},
		"transformSpec":{"transforms":[
			{"type":"expression","name":"animal","expression":"concat('super-', animal)"},
			{"type":"expression","name":"triple-number","expression":"number * 3"}],
		"filter":{"type":"or","fields":[{"type":"selector","dimension":"animal","value":"super-mongoose"},
			{"type":"and","fields":[{"type":"bound","dimension":"triple-number","lower":"900","ordering":"numeric"},
				{"type":"not","field":{"type":"in","dimension":"location","values":["4"]}}]}]}}}`, ""))
	if b.stats.Processed != 2 || b.stats.ThrownAway != 2 {
		t.Errorf("stats = %+v, want 2 processed, 2 thrown away", b.stats)
	}
	got := map[string]float64{}
	for _, r := range b.rows(t) {
		got[r["animal"].(string)] = sumOf([]map[string]any{r}, "triple-number")
	}
	if len(got) != 2 || got["super-mongoose"] != 600 || got["super-snake"] != 900 {
		t.Errorf("rows = %v", got)
	}
}

func TestTimeTransformIntervalsAndMissingValue(t *testing.T) {
	data := `{"t":"2020-01-01T10:00:00Z","d":"a"}
{"d":"b"}
{"t":"2021-06-01T00:00:00Z","d":"c"}
`
	b := build(t, inlineTask(data, `{"dataSource":"x","timestampSpec":{"column":"t","format":"iso","missingValue":"2020-01-02T05:00:00Z"},
		"dimensionsSpec":{"dimensions":["d"]},"granularitySpec":{"segmentGranularity":"month","queryGranularity":"day","rollup":false,
		"intervals":["2020-01-01/2020-02-01"]}}`, ""))
	if b.stats.Processed != 2 || b.stats.ThrownAway != 1 {
		t.Errorf("stats = %+v", b.stats)
	}
	rows := b.rows(t)
	day2 := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC).UnixMilli()
	if len(rows) != 2 || rows[1]["__time"] != day2 || rows[1]["d"] != "b" {
		t.Errorf("rows = %v", rows)
	}

	// A __time transform replaces the parsed timestamp.
	b = build(t, inlineTask(data, `{"dataSource":"x","timestampSpec":{"column":"t","missingValue":"2020-01-02T05:00:00Z"},
		"dimensionsSpec":{"dimensions":["d"]},"granularitySpec":{"rollup":false},
		"transformSpec":{"transforms":[{"type":"expression","name":"__time","expression":"timestamp_parse('1999-09-09')"}]}}`, ""))
	want := time.Date(1999, 9, 9, 0, 0, 0, 0, time.UTC).UnixMilli()
	for _, r := range b.rows(t) {
		if r["__time"] != want {
			t.Errorf("time %v, want %d", r["__time"], want)
		}
	}
}

func TestMaxParseExceptions(t *testing.T) {
	data := `{"timestamp":"2020-01-01","x":"a"}
{"timestamp":"not a time","x":"b"}
{"timestamp":"2020-01-01","x":
{"timestamp":"2020-01-02","x":"c"}
`
	ds := `{"dataSource":"x","timestampSpec":{"column":"timestamp"},"dimensionsSpec":{"dimensions":["x"]}}`
	b := build(t, inlineTask(data, ds, `{"type":"index","maxParseExceptions":5}`))
	if b.stats.Processed != 2 || b.stats.Unparseable < 2 {
		t.Errorf("stats = %+v, want 2 processed and the rest unparseable", b.stats)
	}
	s, err := ParseSpec(inlineTask(data, ds, `{"type":"index","maxParseExceptions":0}`))
	if err != nil {
		t.Fatal(err)
	}
	_, stats, err := Build(t.Context(), s, BuildOptions{Version: "v", TempDir: t.TempDir()})
	var pe *ParseExceptionsError
	if !errors.As(err, &pe) || stats.Unparseable != 1 || !strings.Contains(err.Error(), "Max parse exceptions[0] exceeded") {
		t.Errorf("err = %v, stats %+v", err, stats)
	}
}

func TestMaxRowsPerSegmentPartitions(t *testing.T) {
	b := build(t, inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},
		"dimensionsSpec":{"dimensions":["animal"]},"granularitySpec":{"rollup":false}}`,
		`{"type":"index_parallel","partitionsSpec":{"type":"dynamic","maxRowsPerSegment":3}}`))
	if len(b.segs) != 2 || b.segs[0].ShardSpec.PartitionNum != 0 || b.segs[1].ShardSpec.PartitionNum != 1 || b.segs[1].ShardSpec.CorePartitions != 2 {
		t.Errorf("segments = %v", b.segs)
	}
}

func TestBadSpecs(t *testing.T) {
	good := `{"dataSource":"a","timestampSpec":{"column":"timestamp"},"dimensionsSpec":{"dimensions":["animal"]}}`
	cases := map[string]struct{ payload, want string }{
		"not json":     {`{"type":"index",`, "JSON object"},
		"no spec":      {`{"type":"index"}`, "missing 'spec'"},
		"no ds":        {string(inlineTask("", `{"timestampSpec":{"column":"t"}}`, "")), "dataSource must not be empty"},
		"no ts":        {string(inlineTask("", `{"dataSource":"a"}`, "")), "timestampSpec is required"},
		"bad format":   {string(inlineTask("", `{"dataSource":"a","timestampSpec":{"format":"iso","missingValue":"garbage"}}`, "")), "timestampSpec.missingValue"},
		"bad agg":      {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"metricsSpec":[{"type":"fancy","name":"m","fieldName":"x"}]}`, "")), `unsupported aggregator type "fancy"`},
		"no fieldName": {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"metricsSpec":[{"type":"longSum","name":"m"}]}`, "")), "fieldName is required"},
		"dup dim":      {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"dimensionsSpec":{"dimensions":["x","x"]}}`, "")), `"x" is listed twice`},
		"dim type":     {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"dimensionsSpec":{"dimensions":[{"type":"json","name":"j"}]}}`, "")), `unsupported type "json"`},
		"granularity":  {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"granularitySpec":{"segmentGranularity":"hour","queryGranularity":"day"}}`, "")), "coarser than segmentGranularity"},
		"bad interval": {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"granularitySpec":{"intervals":["2020-02-01/2020-01-01"]}}`, "")), "granularitySpec.intervals"},
		"bad expr":     {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"transformSpec":{"transforms":[{"type":"expression","name":"y","expression":"concat("}]}}`, "")), "transformSpec.transforms[0]"},
		"bad filter":   {string(inlineTask("", `{"dataSource":"a","timestampSpec":{},"transformSpec":{"filter":{"type":"javascript","dimension":"x","function":"f"}}}`, "")), "transformSpec.filter"},
		"max rows":     {string(inlineTask("", good, `{"type":"index","maxRowsPerSegment":0}`)), "maxRowsPerSegment must be > 0"},
		"hashed":       {string(inlineTask("", good, `{"type":"index_parallel","partitionsSpec":{"type":"hashed"}}`)), `partitionsSpec type "hashed"`},
		"parser":       {`{"type":"index","spec":{"dataSchema":{"dataSource":"a","parser":{"type":"string"}},"ioConfig":{}}}`, "legacy parser"},
		"no source":    {`{"type":"index","spec":{"dataSchema":` + good + `,"ioConfig":{"inputFormat":{"type":"json"}}}}`, "inputSource is required"},
		"bad source":   {`{"type":"index","spec":{"dataSchema":` + good + `,"ioConfig":{"inputSource":{"type":"s4"},"inputFormat":{"type":"json"}}}}`, "ioConfig.inputSource"},
		"no format":    {`{"type":"index","spec":{"dataSchema":` + good + `,"ioConfig":{"inputSource":{"type":"inline","data":"x"}}}}`, "inputFormat is required"},
		"ds mismatch":  {`{"type":"index","dataSource":"b","spec":{"dataSchema":` + good + `,"ioConfig":{"inputSource":{"type":"inline","data":"x"},"inputFormat":{"type":"json"}}}}`, "differs"},
	}
	for name, c := range cases {
		_, _, err := middlemanager.ParseTask([]byte(c.payload), time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, c.want)
		}
	}
}

func TestValidateLocks(t *testing.T) {
	task, locks, err := middlemanager.ParseTask(inlineTask(animals, `{"dataSource":"wiki","timestampSpec":{},
		"granularitySpec":{"segmentGranularity":"day","intervals":["2013-08-31T05:00/2013-09-01T01:00","2013-09-01T02:00/2013-09-02"]}}`, ""), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if task.DataSource != "wiki" || !strings.HasPrefix(task.ID, "index_wiki_") {
		t.Errorf("task = %+v", task)
	}
	want := mustInterval("2013-08-31/2013-09-02")
	if len(locks) != 1 || locks[0] != want {
		t.Errorf("locks = %v, want [%s]", locks, want)
	}
	_, locks, err = middlemanager.ParseTask([]byte(strings.Replace(string(inlineTask(animals, `{"dataSource":"w","timestampSpec":{}}`, "")), `"type":"index"`, `"type":"index_parallel"`, 1)), time.Now())
	if err != nil || len(locks) != 1 || locks[0] != interval.Eternity {
		t.Errorf("locks = %v, err %v; want Eternity", locks, err)
	}
}

func TestPlaceAppend(t *testing.T) {
	iv := mustInterval("2020-01-01/2020-01-02")
	mine := []*segmeta.DataSegment{{Interval: iv, Version: "v3", ShardSpec: segmeta.NumberedShard(0, 2)}, {Interval: iv, Version: "v3", ShardSpec: segmeta.NumberedShard(1, 2)}}
	existing := []*segmeta.DataSegment{
		{Interval: iv, Version: "v1", ShardSpec: segmeta.NumberedShard(0, 1)},
		{Interval: iv, Version: "v2", ShardSpec: segmeta.NumberedShard(0, 2)},
		{Interval: iv, Version: "v2", ShardSpec: segmeta.NumberedShard(1, 2)},
		{Interval: iv, Version: "v2", ShardSpec: segmeta.NumberedShard(2, 2)},
	}
	PlaceAppend(mine, existing)
	for i, s := range mine {
		if s.Version != "v2" || s.ShardSpec.PartitionNum != int32(3+i) || s.ShardSpec.CorePartitions != 2 {
			t.Errorf("segment %d = %s %+v", i, s.Version, s.ShardSpec)
		}
	}
	fresh := []*segmeta.DataSegment{{Interval: iv, Version: "v3", ShardSpec: segmeta.NumberedShard(0, 1)}}
	PlaceAppend(fresh, nil)
	if fresh[0].Version != "v3" || fresh[0].ShardSpec.PartitionNum != 0 {
		t.Errorf("segment without existing data changed: %+v", fresh[0])
	}
}

// reportDoc is the ingestionStatsAndErrors report, as tests read it.
type reportDoc struct {
	I struct {
		Type    string `json:"type"`
		TaskID  string `json:"taskId"`
		Payload struct {
			IngestionState string `json:"ingestionState"`
			RowStats       struct {
				BuildSegments RowStats `json:"buildSegments"`
			} `json:"rowStats"`
			SegmentsPublished int     `json:"segmentsPublished"`
			ErrorMsg          *string `json:"errorMsg"`
			Available         bool    `json:"segmentAvailabilityConfirmed"`
		} `json:"payload"`
	} `json:"ingestionStatsAndErrors"`
}

func TestReportShape(t *testing.T) {
	rep := MakeReport("task1", "COMPLETED", RowStats{Processed: 10, ThrownAway: 2, Unparseable: 1}, nil, true, 5, 4)
	var doc reportDoc
	if err := json.Unmarshal(rep, &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.I.Payload
	if doc.I.Type != "ingestionStatsAndErrors" || doc.I.TaskID != "task1" || p.IngestionState != "COMPLETED" || p.ErrorMsg != nil || !p.Available ||
		p.RowStats.BuildSegments != (RowStats{Processed: 10, ThrownAway: 2, Unparseable: 1}) ||
		!strings.Contains(string(rep), `"processedWithError":0`) {
		t.Errorf("report = %s", rep)
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add(inlineTask(animals, `{"dataSource":"a","timestampSpec":{"column":"timestamp"},"dimensionsSpec":{"dimensions":["animal"]}}`, ""))
	f.Add([]byte(`{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"a","timestampSpec":{},"transformSpec":{"filter":{"type":"not","field":{"type":"selector","dimension":"x","value":null}}}},"ioConfig":{"inputSource":{"type":"inline","data":"{}"},"inputFormat":{"type":"csv","columns":["a"]}}}}`))
	f.Add([]byte(`{"type":"index","spec":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec(b)
		if err == nil && s.DataSource == "" {
			t.Fatal("accepted a spec without a dataSource")
		}
	})
}

func mustInterval(s string) interval.Interval {
	iv, err := interval.Parse(s)
	if err != nil {
		panic(err)
	}
	return iv
}

func TestSetLockVersions(t *testing.T) {
	d1, d2 := mustInterval("2020-01-01/2020-01-02"), mustInterval("2020-01-02/2020-01-03")
	segs := []*segmeta.DataSegment{{Interval: d1, Version: "build"}, {Interval: d2, Version: "build"}}
	setLockVersions(segs, []lockVersion{{mustInterval("2020-01-02/2020-01-04"), "v2"}, {mustInterval("2019-12-01/2020-01-02"), "v1"}})
	if segs[0].Version != "v1" || segs[1].Version != "v2" {
		t.Errorf("versions = %s, %s", segs[0].Version, segs[1].Version)
	}
}
