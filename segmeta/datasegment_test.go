package segmeta

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

const wikiJSON = `{"dataSource":"wikipedia","interval":"2015-09-12T00:00:00.000Z/2015-09-13T00:00:00.000Z",` +
	`"version":"2023-08-10T04:12:03.860Z","loadSpec":{"type":"local","path":"/var/druid/segments/wikipedia/index.zip"},` +
	`"dimensions":"channel,cityName,page","metrics":"count,sum_added",` +
	`"shardSpec":{"type":"numbered","partitionNum":0,"partitions":1},"binaryVersion":9,"size":4463,` +
	`"identifier":"wikipedia_2015-09-12T00:00:00.000Z_2015-09-13T00:00:00.000Z_2023-08-10T04:12:03.860Z"}`

// segJSON builds a canonical segment document with the given shard spec.
func segJSON(ds, shard, ident string, extra string) string {
	return `{"dataSource":"` + ds + `","interval":"2018-05-21T16:00:00.000Z/2018-05-21T17:00:00.000Z",` +
		`"version":"2018-05-21T15:56:09.909Z","loadSpec":{"type":"s3_zip","bucket":"b","key":"k/index.zip","S3Schema":"s3n"},` +
		`"dimensions":"page,user","metrics":"count","shardSpec":` + shard + extra +
		`,"binaryVersion":9,"size":123,"identifier":"` + ident + `"}`
}

const idBase = "_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_2018-05-21T15:56:09.909Z"

// Documents exactly as Druid writes them; each must survive
// unmarshal+marshal byte for byte and the binary round trip.
var canonicalDocs = []string{
	wikiJSON,
	segJSON("wiki", `{"type":"numbered","partitionNum":2,"partitions":2}`, "wiki"+idBase+"_2", ""),
	segJSON("wiki", `{"type":"numbered","partitionNum":0,"partitions":0}`, "wiki"+idBase, ""),
	segJSON("my_data_source", `{"type":"linear","partitionNum":3}`, "my_data_source"+idBase+"_3", ""),
	segJSON("wiki", `{"type":"hashed","partitionNum":1,"partitions":2,"bucketId":1,"numBuckets":2,"partitionDimensions":["page"],"partitionFunction":"murmur3_32_abs"}`, "wiki"+idBase+"_1", ""),
	segJSON("wiki", `{"type":"hashed","partitionNum":0,"partitions":1,"bucketId":0,"numBuckets":1,"partitionDimensions":[],"partitionFunction":null}`, "wiki"+idBase, ""),
	segJSON("wiki", `{"type":"single","start":null,"end":"m","dimension":"page","partitionNum":0,"numCorePartitions":2}`, "wiki"+idBase, ""),
	segJSON("wiki", `{"type":"single","start":"m","end":null,"dimension":"page","partitionNum":1,"numCorePartitions":-1}`, "wiki"+idBase+"_1", ""),
	segJSON("wiki", `{"type":"range","dimensions":["page","user"],"start":["m",null],"end":null,"partitionNum":1,"numCorePartitions":2}`, "wiki"+idBase+"_1", ""),
	segJSON("wiki", `{"type":"range","dimensions":["page"],"virtualColumns":[{"type":"expression","name":"v","expression":"upper(page)"}],"start":null,"end":["x"],"partitionNum":0,"numCorePartitions":2}`, "wiki"+idBase, ""),
	segJSON("wiki", `{"type":"tombstone","partitionNum":0,"partitions":1}`, "wiki"+idBase, ""),
	segJSON("wiki", `{"type":"none"}`, "wiki"+idBase, ""),
	segJSON("wiki", `{"type":"numbered_overwrite","partitionId":32768,"startRootPartitionId":0,"endRootPartitionId":2,"minorVersion":1,"atomicUpdateGroupSize":2}`, "wiki"+idBase+"_32768", ""),
	segJSON("wiki", `{"type":"numbered","partitionNum":0,"partitions":1}`, "wiki"+idBase,
		`,"lastCompactionState":{"partitionsSpec":{"type":"dynamic","maxRowsPerSegment":5000000,"maxTotalRows":null},"dimensionsSpec":{"dimensions":["page"]},"metricsSpec":[],"indexSpec":{"bitmap":{"type":"roaring"}},"granularitySpec":{"type":"uniform","segmentGranularity":"HOUR","rollup":false}}`),
	segJSON("wiki", `{"type":"numbered","partitionNum":0,"partitions":1}`, "wiki"+idBase,
		`,"compactionStateFingerprint":"abc123"`),
	strings.Replace(segJSON(`w\"q\\x`+"\u00e9<>", `{"type":"numbered","partitionNum":0,"partitions":1}`, `w\"q\\x`+"\u00e9<>"+idBase, ""),
		`"metrics":"count",`, `"metrics":"count","projections":"p1,p2",`, 1),
	strings.Replace(segJSON("wiki", `{"type":"numbered","partitionNum":0,"partitions":1}`, "wiki"+idBase, ""),
		`"metrics":"count",`, `"metrics":"","projections":"",`, 1),
}

func TestJSONRoundTripCanonical(t *testing.T) {
	for _, doc := range canonicalDocs {
		var s DataSegment
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("unmarshal %s: %v", doc, err)
		}
		if got := string(s.AppendJSON(nil)); got != doc {
			t.Errorf("round trip changed the document\n got %s\nwant %s", got, doc)
		}
		// encoding/json HTML-escapes <, > and & in MarshalJSON output;
		// otherwise it must be the same bytes.
		out, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.ContainsAny(doc, "<>&") && string(out) != doc {
			t.Errorf("json.Marshal differs from AppendJSON:\n%s", out)
		}
		// binary round trip is exact
		bin := s.AppendBinary([]byte("prefix"))
		var d DataSegment
		rest, err := d.DecodeBinary(append(bin[len("prefix"):], 0xEE))
		if err != nil {
			t.Fatalf("decode binary: %v", err)
		}
		if len(rest) != 1 || rest[0] != 0xEE {
			t.Errorf("DecodeBinary consumed the wrong number of bytes: rest %v", rest)
		}
		if !reflect.DeepEqual(d, s) {
			t.Errorf("binary round trip differs:\n got %+v\nwant %+v", d, s)
		}
	}
}

func TestJSONDefaultsAndNormalisation(t *testing.T) {
	in := `{"dataSource":"wiki","interval":"2015-09-12/2015-09-13","version":"v1",
	  "loadSpec":{ "type" : "local", "path": "/x" },
	  "dimensions":"a,,b,","metrics":null,"size":"17","identifier":"ignored","Size":5,"unknown":[1,2]}`
	var s DataSegment
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	want := `{"dataSource":"wiki","interval":"2015-09-12T00:00:00.000Z/2015-09-13T00:00:00.000Z","version":"v1",` +
		`"loadSpec":{"type":"local","path":"/x"},"dimensions":"a,b","metrics":"",` +
		`"shardSpec":{"type":"numbered","partitionNum":0,"partitions":1},"binaryVersion":null,"size":17,` +
		`"identifier":"wiki_2015-09-12T00:00:00.000Z_2015-09-13T00:00:00.000Z_v1"}`
	if got := string(s.AppendJSON(nil)); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if s.Projections != nil || s.LastCompactionState != "" {
		t.Errorf("absent optional fields must stay absent")
	}

	// Tombstone input with other numbers still writes Druid's constants;
	// arrays are accepted for dimensions; loadSpec null stays null.
	in2 := `{"dataSource":"wiki","interval":"2015-09-12T00:00:00.000Z/2015-09-13T00:00:00.000Z","version":"v1",
	  "loadSpec":null,"dimensions":["x","y"],"shardSpec":{"type":"tombstone","partitionNum":0,"partitions":0},"size":0}`
	if err := json.Unmarshal([]byte(in2), &s); err != nil {
		t.Fatal(err)
	}
	got := string(s.AppendJSON(nil))
	if !strings.Contains(got, `"loadSpec":null,"dimensions":"x,y"`) ||
		!strings.Contains(got, `"shardSpec":{"type":"tombstone","partitionNum":0,"partitions":1}`) || !s.IsTombstone() {
		t.Errorf("got %s", got)
	}

	// hashed defaults: bucketId = partitionNum, numBuckets = partitions.
	var sp ShardSpec
	if err := json.Unmarshal([]byte(`{"type":"hashed","partitionNum":3,"partitions":4}`), &sp); err != nil {
		t.Fatal(err)
	}
	if got := string(sp.AppendJSON(nil)); got != `{"type":"hashed","partitionNum":3,"partitions":4,"bucketId":3,"numBuckets":4,"partitionDimensions":[],"partitionFunction":null}` {
		t.Errorf("hashed defaults: %s", got)
	}
	if err := json.Unmarshal([]byte(`{"type":"single","dimension":"d","partitionNum":1}`), &sp); err != nil {
		t.Fatal(err)
	}
	if sp.CorePartitions != UnknownCorePartitions || sp.chunkKind() != chunkString {
		t.Errorf("single without numCorePartitions must be unknown (-1): %+v", sp)
	}
}

func TestJSONErrors(t *testing.T) {
	base := map[string]any{
		"dataSource": "wiki", "interval": "2015-09-12/2015-09-13", "version": "v1", "size": 1,
	}
	cases := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"no dataSource", func(m map[string]any) { delete(m, "dataSource") }},
		{"empty dataSource", func(m map[string]any) { m["dataSource"] = "" }},
		{"no interval", func(m map[string]any) { delete(m, "interval") }},
		{"bad interval", func(m map[string]any) { m["interval"] = "yesterday" }},
		{"inverted interval", func(m map[string]any) { m["interval"] = "2015-09-13/2015-09-12" }},
		{"no version", func(m map[string]any) { delete(m, "version") }},
		{"negative size", func(m map[string]any) { m["size"] = -1 }},
		{"fractional size", func(m map[string]any) { m["size"] = 1.5 }},
		{"loadSpec array", func(m map[string]any) { m["loadSpec"] = []int{1} }},
		{"dimensions number", func(m map[string]any) { m["dimensions"] = 3 }},
		{"unknown shard type", func(m map[string]any) { m["shardSpec"] = map[string]any{"type": "bucket_hash"} }},
		{"shard without type", func(m map[string]any) { m["shardSpec"] = map[string]any{"partitionNum": 1} }},
		{"negative partition", func(m map[string]any) {
			m["shardSpec"] = map[string]any{"type": "numbered", "partitionNum": -1, "partitions": 1}
		}},
		{"linear without partitionNum", func(m map[string]any) { m["shardSpec"] = map[string]any{"type": "linear"} }},
		{"range without dimensions", func(m map[string]any) {
			m["shardSpec"] = map[string]any{"type": "range", "partitionNum": 0}
		}},
		{"overwrite in root space", func(m map[string]any) {
			m["shardSpec"] = map[string]any{"type": "numbered_overwrite", "partitionId": 1, "startRootPartitionId": 0,
				"endRootPartitionId": 1, "minorVersion": 1, "atomicUpdateGroupSize": 1}
		}},
		{"binaryVersion overflow", func(m map[string]any) { m["binaryVersion"] = 1 << 40 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			c.edit(m)
			doc, _ := json.Marshal(m)
			var s DataSegment
			if err := json.Unmarshal(doc, &s); err == nil {
				t.Errorf("expected an error for %s", doc)
			}
		})
	}
	var s DataSegment
	for _, doc := range []string{`null`, `[]`, `{"dataSource":`, `"x"`} {
		if err := s.UnmarshalJSON([]byte(doc)); err == nil {
			t.Errorf("expected an error for %s", doc)
		}
	}
}

func TestInterningShares(t *testing.T) {
	var a, b DataSegment
	if err := json.Unmarshal([]byte(wikiJSON), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(wikiJSON), &b); err != nil {
		t.Fatal(err)
	}
	if unsafe.StringData(a.DataSource) != unsafe.StringData(b.DataSource) ||
		unsafe.StringData(a.Version) != unsafe.StringData(b.Version) {
		t.Errorf("datasource and version must be interned")
	}
	if &a.Dimensions[0] != &b.Dimensions[0] || &a.Metrics[0] != &b.Metrics[0] {
		t.Errorf("dimension and metric lists must be shared")
	}
	var c DataSegment
	if _, err := c.DecodeBinary(a.AppendBinary(nil)); err != nil {
		t.Fatal(err)
	}
	if &c.Dimensions[0] != &a.Dimensions[0] || unsafe.StringData(c.Version) != unsafe.StringData(a.Version) {
		t.Errorf("binary decoding must reuse the interned values")
	}
	// Hand-built segments are interned on request.
	d := DataSegment{DataSource: strings.Clone("wikipedia"), Dimensions: []string{"channel", "cityName", "page"}}
	d.Intern()
	if unsafe.StringData(d.DataSource) != unsafe.StringData(a.DataSource) || &d.Dimensions[0] != &a.Dimensions[0] {
		t.Errorf("Intern must canonicalise")
	}
}

func TestDecodeBinaryRejectsGarbage(t *testing.T) {
	var s DataSegment
	if err := json.Unmarshal([]byte(canonicalDocs[4]), &s); err != nil {
		t.Fatal(err)
	}
	bin := s.AppendBinary(nil)
	for n := range len(bin) {
		var d DataSegment
		if _, err := d.DecodeBinary(bin[:n]); err == nil {
			t.Errorf("truncated record of %d bytes decoded", n)
		}
	}
	bad := append([]byte{}, bin...)
	bad[0] = 9
	if _, err := s.DecodeBinary(bad); err == nil {
		t.Errorf("unknown tag accepted")
	}
}

func FuzzDecodeBinary(f *testing.F) {
	for _, doc := range canonicalDocs {
		var s DataSegment
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			f.Fatal(err)
		}
		f.Add(s.AppendBinary(nil))
	}
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		var s DataSegment
		rest, err := s.DecodeBinary(b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the same bytes.
		enc := s.AppendBinary(nil)
		if string(enc) != string(b[:len(b)-len(rest)]) {
			// Non-minimal varints decode fine but re-encode minimally; the
			// decoded value must then be stable.
			var s2 DataSegment
			if _, err := s2.DecodeBinary(enc); err != nil || !reflect.DeepEqual(s, s2) {
				t.Fatalf("re-encoding is not stable: %v", err)
			}
		}
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	for _, doc := range canonicalDocs {
		f.Add([]byte(doc))
	}
	f.Add([]byte(`{"dataSource":"a","interval":"2000/P1D","version":"v","shardSpec":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s DataSegment
		if err := json.Unmarshal(b, &s); err != nil {
			return
		}
		out := s.AppendJSON(nil)
		var s2 DataSegment
		if err := json.Unmarshal(out, &s2); err != nil {
			t.Fatalf("re-reading our own output failed: %v\n%s", err, out)
		}
		if out2 := s2.AppendJSON(nil); string(out2) != string(out) {
			t.Fatalf("JSON output is not a fixed point:\n%s\n%s", out, out2)
		}
	})
}

func TestStreamEncoding(t *testing.T) {
	var segs []*DataSegment
	for _, doc := range canonicalDocs {
		s := new(DataSegment)
		if err := json.Unmarshal([]byte(doc), s); err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
	}
	enc := NewEncoder()
	var buf []byte
	var sizes []int
	for range 2 {
		for _, s := range segs {
			n := len(buf)
			buf = enc.Append(buf, s)
			sizes = append(sizes, len(buf)-n)
		}
	}
	if sizes[len(segs)] >= sizes[0] || sizes[len(segs)] >= len(segs[0].AppendBinary(nil)) {
		t.Errorf("repeated values must be written as references: sizes %v", sizes)
	}
	dec := NewDecoder()
	rest := buf
	for i := range 2 * len(segs) {
		var d DataSegment
		var err error
		if rest, err = dec.Decode(&d, rest); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(&d, segs[i%len(segs)]) {
			t.Errorf("record %d differs", i)
		}
	}
	if len(rest) != 0 {
		t.Errorf("trailing bytes")
	}
	// A reference is meaningless in a self-contained record and in a
	// stream that never defined it.
	second := enc.Append(nil, segs[0])
	var d DataSegment
	if _, err := d.DecodeBinary(second); err == nil {
		t.Errorf("self-contained decoding accepted a reference")
	}
	if _, err := NewDecoder().Decode(&d, second); err == nil {
		t.Errorf("fresh decoder accepted a reference")
	}
}
