package segmeta

import (
	"reflect"
	"slices"
	"testing"

	"strata/interval"
)

func mustIv(t testing.TB, s string) interval.Interval {
	t.Helper()
	iv, err := interval.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

func TestIDString(t *testing.T) {
	iv := mustIv(t, "2018-05-21T16:00:00.000Z/2018-05-21T17:00:00.000Z")
	id := ID{DataSource: "wiki", Interval: iv, Version: "2018-05-21T15:56:09.909Z", PartitionNum: 1}
	if got, want := id.String(), "wiki_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_2018-05-21T15:56:09.909Z_1"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	id.PartitionNum = 0
	if got, want := id.String(), "wiki_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_2018-05-21T15:56:09.909Z"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestParseID(t *testing.T) {
	iv := mustIv(t, "2018-05-21T16:00:00.000Z/2018-05-21T17:00:00.000Z")
	cases := []ID{
		{DataSource: "wiki", Interval: iv, Version: "2018-05-21T15:56:09.909Z"},
		{DataSource: "wiki", Interval: iv, Version: "2018-05-21T15:56:09.909Z", PartitionNum: 7},
		{DataSource: "my_wiki_2", Interval: iv, Version: "v_1_x", PartitionNum: 12},
		{DataSource: "ds_2018-05-21T16:00:00.000Z", Interval: iv, Version: "v"}, // datasource that looks like a time
		{DataSource: "a", Interval: iv, Version: ""},
	}
	for _, want := range cases {
		t.Run(want.String(), func(t *testing.T) {
			got, err := ParseID(want.DataSource, want.String())
			if err != nil || got != want {
				t.Errorf("ParseID(%q, %q) = %+v, %v; want %+v", want.DataSource, want.String(), got, err, want)
			}
		})
	}
	// A version ending in _<n> is ambiguous; the partition reading comes first.
	amb := ID{DataSource: "wiki", Interval: iv, Version: "v_3"}
	ps := PossibleIDsWithDataSource("wiki", amb.String())
	want := []ID{{DataSource: "wiki", Interval: iv, Version: "v", PartitionNum: 3}, amb}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("possible parses %+v, want %+v", ps, want)
	}
	// "_0" and "_-1" are never partition numbers.
	for _, v := range []string{"v_0", "v_-1", "v_+2", "v_99999999999"} {
		id := ID{DataSource: "wiki", Interval: iv, Version: v}
		if ps := PossibleIDsWithDataSource("wiki", id.String()); len(ps) != 1 || ps[0] != id {
			t.Errorf("%s: got %+v", v, ps)
		}
	}
	bad := []struct{ ds, id string }{
		{"wiki", "wiki"},
		{"wiki", "wiki_"},
		{"wiki", "wikipedia_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_v"},
		{"other", "wiki_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_v"},
		{"", "_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_v"},
		{"wiki", "wiki_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z"},
		{"wiki", "wiki_2018-05-21T17:00:00.000Z_2018-05-21T16:00:00.000Z_v"}, // end before start
		{"wiki", "wiki_2018-05-21T16:00:00.000Z_2018-05-21T16:00:00.000Z_v"}, // empty
		{"wiki", "wiki_2018-05-21_2018-05-22_v"},                             // not the full form
		{"wiki", "wiki_garbage_2018-05-21T16:00:00.000Z_v"},
	}
	for _, b := range bad {
		if id, err := ParseID(b.ds, b.id); err == nil {
			t.Errorf("ParseID(%q, %q) = %+v, want error", b.ds, b.id, id)
		}
	}
	// Offsets other than Z parse to the same instant.
	got, err := ParseID("wiki", "wiki_2018-05-21T18:00:00.000+02:00_2018-05-21T17:00:00.000Z_v")
	if err != nil || got.Interval != iv {
		t.Errorf("offset form: %+v %v", got, err)
	}
}

func TestPossibleIDs(t *testing.T) {
	iv := mustIv(t, "2018-05-21T16:00:00.000Z/2018-05-21T17:00:00.000Z")
	id := ID{DataSource: "my_ds", Interval: iv, Version: "2018-05-21T15:56:09.909Z", PartitionNum: 4}
	ps := PossibleIDs(id.String())
	want := []ID{id, {DataSource: "my_ds", Interval: iv, Version: "2018-05-21T15:56:09.909Z_4"}}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("got %+v\nwant %+v", ps, want)
	}
	// A datasource name holding a timestamp: the probable datasource (before
	// the first timestamp) is tried first, the real one also appears.
	tricky := ID{DataSource: "ds_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z", Interval: iv, Version: "v"}
	ps = PossibleIDs(tricky.String())
	if len(ps) < 2 || ps[0].DataSource != "ds" || !slices.Contains(ps, tricky) {
		t.Errorf("tricky: %+v", ps)
	}
	if ps := PossibleIDs("nonsense"); len(ps) != 0 {
		t.Errorf("nonsense parsed: %+v", ps)
	}
}

func TestIDCompare(t *testing.T) {
	iv1 := mustIv(t, "2018-05-21/2018-05-22")
	iv2 := mustIv(t, "2018-05-21/2018-05-23")
	ids := []ID{
		{DataSource: "b", Interval: iv1, Version: "v1"},
		{DataSource: "a", Interval: iv2, Version: "v1"},
		{DataSource: "a", Interval: iv1, Version: "v2"},
		{DataSource: "a", Interval: iv1, Version: "v1", PartitionNum: 2},
		{DataSource: "a", Interval: iv1, Version: "v1"},
	}
	slices.SortFunc(ids, ID.Compare)
	want := []string{"a/v1/0", "a/v1/2", "a/v2/0", "a/v1/0", "b/v1/0"}
	for i, id := range ids {
		got := id.DataSource + "/" + id.Version + "/" + string(rune('0'+id.PartitionNum))
		if got != want[i] {
			t.Errorf("position %d: got %s want %s", i, got, want[i])
		}
	}
	if ids[3].Interval != iv2 {
		t.Errorf("longer interval must sort after")
	}
}

func FuzzParseID(f *testing.F) {
	f.Add("wiki", "wiki_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_v_3")
	f.Add("a_b", "a_b_2018-05-21T16:00:00.000Z_2018-05-21T17:00:00.000Z_2018-05-21T15:56:09.909Z")
	f.Fuzz(func(t *testing.T, ds, s string) {
		for _, id := range PossibleIDsWithDataSource(ds, s) {
			// Every parse must re-read to itself from its canonical form.
			again, err := ParseID(id.DataSource, id.String())
			if err != nil {
				t.Fatalf("%+v does not re-parse: %v", id, err)
			}
			if again != id && !slices.Contains(PossibleIDsWithDataSource(id.DataSource, id.String()), id) {
				t.Fatalf("%+v not among the parses of its own string", id)
			}
		}
		_ = PossibleIDs(s)
	})
}
