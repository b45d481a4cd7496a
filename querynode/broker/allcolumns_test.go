package broker

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"strata/interval"
	"strata/segmeta"
)

// dayOfSegments is n DAY segments of ds from 2020-01-01, each with the bench
// data set's columns (and "extra" on the last one when extra).
func daySegments(t testing.TB, ds string, n int, extra bool) []*segmeta.DataSegment {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]*segmeta.DataSegment, n)
	for i := range n {
		d := start.AddDate(0, 0, i)
		s := seg(t, ds, d.Format("2006-01-02")+"/"+d.AddDate(0, 0, 1).Format("2006-01-02"), "v1", 0, 1)
		s.Dimensions = []string{"channel", "city", "country", "isNew", "isRobot", "namespace", "page", "user"}
		s.Metrics = []string{"added", "commentLength", "deleted", "delta", "price"}
		if extra && i == n-1 {
			s.Dimensions = append(s.Dimensions, "extra")
		}
		out[i] = s
	}
	return out
}

func newViewBroker(t testing.TB) *Broker {
	b, err := New(Config{Name: "b", Historicals: []string{"http://h:1"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The columns of a datasource over all time, and their order, follow the
// view: a segment with a new column, or its removal, shows at once.
func TestAllTimeColumnsFollowTheView(t *testing.T) {
	b := newViewBroker(t)
	h := b.view.servers[0]
	all := interval.Eternity
	b.view.apply(h, ann("1", daySegments(t, "wiki", 3, false)...), nil)
	if got := b.DataSourceColumns("wiki", &all); slices.Contains(got.Dimensions, "extra") || len(got.Metrics) != 5 {
		t.Fatalf("before: %+v", got)
	}
	mine := b.DataSourceColumns("wiki", &all)
	mine.Dimensions[0] = "mine" // callers own what they get
	b.view.apply(h, ann("2", daySegments(t, "wiki", 4, true)...), nil)
	if got := b.DataSourceColumns("wiki", &all); !slices.Contains(got.Dimensions, "extra") || got.Dimensions[0] != "channel" {
		t.Fatalf("after a segment with a new column: %+v", got)
	}
	order := b.ColumnOrder("wiki")
	if want := []string{"channel", "city", "country", "isNew", "isRobot", "namespace", "page", "user", "extra", "added", "commentLength", "deleted", "delta", "price"}; !slices.Equal(order, want) {
		t.Fatalf("order after a segment with a new column: %v, want %v", order, want)
	}
	order[0] = "mine"
	b.view.apply(h, ann("3", daySegments(t, "wiki", 3, false)...), nil)
	if got := b.DataSourceColumns("wiki", &all); slices.Contains(got.Dimensions, "extra") {
		t.Fatalf("after that segment went: %+v", got)
	}
	if got := b.ColumnOrder("wiki"); slices.Contains(got, "extra") || got[0] != "channel" {
		t.Fatalf("order after that segment went: %v", got)
	}
	if got := b.DataSourceColumns("other", &all); len(got.Dimensions)+len(got.Metrics) != 0 {
		t.Fatalf("unknown datasource: %+v", got)
	}
}

// SQL's catalog asks for a datasource's columns over all time on every
// statement.
func BenchmarkAllTimeColumns(b *testing.B) {
	for _, n := range []int{7, 1000, 10000} {
		br := newViewBroker(b)
		br.view.apply(br.view.servers[0], ann("1", daySegments(b, "wiki", n, false)...), nil)
		all := interval.Eternity
		b.Run(fmt.Sprint(n, "segments"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				br.DataSourceColumns("wiki", &all)
			}
		})
	}
}

// SQL's catalog asks for a datasource's column order on every statement.
func BenchmarkColumnOrder(b *testing.B) {
	for _, n := range []int{7, 1000, 10000} {
		br := newViewBroker(b)
		br.view.apply(br.view.servers[0], ann("1", daySegments(b, "wiki", n, false)...), nil)
		b.Run(fmt.Sprint(n, "segments"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				br.ColumnOrder("wiki")
			}
		})
	}
}
