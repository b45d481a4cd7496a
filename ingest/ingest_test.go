package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"strata/granularity"
	"strata/interval"
	"strata/segmeta"
	"strata/storage/deep"
	"strata/storage/segment"
)

const sample = `{"timestamp":"2024-01-01T01:00:00Z","page":"a","n":1,"x":1.5,"tags":["t1","t2"]}
{"timestamp":"2024-01-01T02:00:00Z","page":"b","n":2,"x":2}
{"timestamp":"2024-01-02T03:00:00Z","page":"a","n":3,"x":null,"extra":true}

{"timestamp":"2024-01-03T00:00:00Z","page":"c","n":4}
`

func TestInferSchema(t *testing.T) {
	s, err := InferSchema(strings.NewReader(sample), 100, "timestamp")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range s.Dimensions {
		got = append(got, fmt.Sprintf("%s:%v:%v", d.Name, d.Kind, d.MultiValue))
	}
	want := fmt.Sprintf("n:%v:false page:%v:false tags:%v:true x:%v:false extra:%v:false",
		segment.KindLong, segment.KindString, segment.KindString, segment.KindDouble, segment.KindString)
	if strings.Join(got, " ") != want {
		t.Fatalf("schema\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestReaderErrors(t *testing.T) {
	parse, _ := interval.ParseTimestampFormat("auto")
	fields := []segment.Field{{Name: "page", Kind: segment.KindString}}
	bad := `{"timestamp":"2024-01-01T00:00:00Z","page":"a"}
{"timestamp":"garbage","page":"b"}
{"page":"no time"}
{"timestamp":"2024-01-01T00:00:00Z"}{"timestamp":"2024-01-01T00:00:00Z"}
not json
`
	rd := &Reader{TimestampColumn: "timestamp", ParseTime: parse, Fields: fields, MaxParseErrors: 4}
	n := 0
	st, err := rd.Read(context.Background(), strings.NewReader(bad), func(segment.Row) error { n++; return nil })
	if err != nil || n != 1 || st.Skipped != 4 || !strings.Contains(st.FirstError, "line 2") {
		t.Fatalf("read: %v rows=%d stats=%+v", err, n, st)
	}
	rd.MaxParseErrors = 3
	if _, err := rd.Read(context.Background(), strings.NewReader(bad), func(segment.Row) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("limit not enforced: %v", err)
	}
}

func TestBuildUploadAndRead(t *testing.T) {
	schema, _ := InferSchema(strings.NewReader(sample), 100, "timestamp")
	store, err := deep.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(Spec{DataSource: "wiki", Fields: schema.Fields, Dimensions: schema.Dimensions,
		SegmentGranularity: granularity.Day, RowsPerSegment: 1, Version: "v1", TempDir: filepath.Join(t.TempDir(), "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	parse, _ := interval.ParseTimestampFormat("iso")
	rd := &Reader{TimestampColumn: "timestamp", ParseTime: parse, Fields: schema.Fields}
	if _, err := rd.Read(context.Background(), strings.NewReader(sample), b.Add); err != nil {
		t.Fatal(err)
	}
	segs, err := b.Finish(context.Background(), DeepUploader{Storage: store})
	if err != nil {
		t.Fatal(err)
	}
	// Day 1 has two rows → two partitions of one row; days 2 and 3 one each.
	var ids []string
	for _, s := range segs {
		ids = append(ids, s.ID().String())
	}
	want := "wiki_2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z_v1 wiki_2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z_v1_1 " +
		"wiki_2024-01-02T00:00:00.000Z_2024-01-03T00:00:00.000Z_v1 wiki_2024-01-03T00:00:00.000Z_2024-01-04T00:00:00.000Z_v1"
	if strings.Join(ids, " ") != want {
		t.Fatalf("segments\n got %s\nwant %s", strings.Join(ids, " "), want)
	}
	if segs[1].ShardSpec != segmeta.NumberedShard(1, 2) || segs[2].ShardSpec != segmeta.NumberedShard(0, 1) {
		t.Fatalf("shard specs %+v %+v", segs[1].ShardSpec, segs[2].ShardSpec)
	}
	rows := 0
	for _, s := range segs {
		var ls deep.LoadSpec
		if err := json.Unmarshal([]byte(s.LoadSpec), &ls); err != nil || ls.Type != "local" {
			t.Fatalf("loadSpec %s", s.LoadSpec)
		}
		dst := filepath.Join(t.TempDir(), "seg")
		if err := store.Get(context.Background(), ls, dst); err != nil {
			t.Fatal(err)
		}
		f, err := segment.Open(dst)
		if err != nil {
			t.Fatal(err)
		}
		if f.Interval().Start != s.Interval.Start || f.Size() != s.Size {
			t.Fatalf("file %s: interval %v size %d vs %d", s.ID(), f.Interval(), f.Size(), s.Size)
		}
		rows += f.NumRows()
		f.Close()
	}
	if rows != 4 {
		t.Fatalf("%d rows stored, want 4", rows)
	}
}

func TestBuilderRejectsCoarseQueryGranularity(t *testing.T) {
	if _, err := NewBuilder(Spec{DataSource: "x", Version: "v", SegmentGranularity: granularity.Day, QueryGranularity: granularity.Month}); err == nil {
		t.Fatal("query granularity coarser than segment granularity accepted")
	}
}
