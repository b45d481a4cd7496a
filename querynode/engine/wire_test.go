package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"strata/querynode/query"
)

// TestMergeSoleSorted checks that merging one sorted partial (the
// broker's case with one data server) equals the general merge, and that
// duplicate keys in it are still combined.
func TestMergeSoleSorted(t *testing.T) {
	q, err := query.Parse([]byte(`{"queryType":"groupBy","dataSource":"w","granularity":"all","intervals":["2024/2025"],
		"dimensions":["d"],"aggregations":[{"type":"longSum","name":"s","fieldName":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	mk := func(keys []string, sums []int64) *Partial {
		p := &Partial{Type: q.Type, SortedKeys: true, Dims: []*DimCol{newDimCol("STRING")}, Aggs: []*AggState{newAggState(q.Aggregations[0], len(keys))}}
		for i, k := range keys {
			p.Times = append(p.Times, int64(10-i))
			if k == "" {
				p.Dims[0].Append(Null)
			} else {
				p.Dims[0].Append(Str(k))
			}
			p.Aggs[0].Longs[i], p.Aggs[0].Null[i] = sums[i], false
		}
		return p
	}
	e := New(Options{})
	render := func(p *Partial) string {
		out, err := e.Finalize(q, p)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	distinct := mk([]string{"", "a", "b", "c"}, []int64{1, 2, 3, 4})
	one, err := e.Merge(q, []*Partial{distinct})
	if err != nil {
		t.Fatal(err)
	}
	two, err := e.Merge(q, []*Partial{distinct, mk(nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	unsorted := *distinct
	unsorted.SortedKeys = false
	hashed, err := e.Merge(q, []*Partial{&unsorted})
	if err != nil {
		t.Fatal(err)
	}
	if render(one) != render(hashed) || render(two) != render(hashed) {
		t.Errorf("sole sorted merge %s, general %s", render(one), render(hashed))
	}
	if distinct.Times[0] != 10 {
		t.Errorf("merge modified its input times")
	}
	dup, err := e.Merge(q, []*Partial{mk([]string{"a", "a", "b"}, []int64{1, 2, 3})})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(dup); !strings.Contains(got, `"d":"a","s":3`) || dup.Len() != 2 {
		t.Errorf("duplicates not combined: %s", got)
	}
}

// TestMergeSortedParallel checks the key-range parallel merge of sorted
// partials against the serial merge: same rows, same order, same sums,
// with nulls, values shared across partials, and the group budget.
func TestMergeSortedParallel(t *testing.T) {
	q, err := query.Parse([]byte(`{"queryType":"groupBy","dataSource":"w","granularity":"all","intervals":["2024/2025"],
		"dimensions":["d"],"aggregations":[{"type":"longSum","name":"s","fieldName":"x"},{"type":"count","name":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Partial
	for pi := range 5 {
		p := &Partial{Type: q.Type, SortedKeys: true, Dims: []*DimCol{newDimCol("STRING")}}
		for _, a := range q.Aggregations {
			p.Aggs = append(p.Aggs, newAggState(a, 0))
		}
		step := pi + 1
		for v := 0; v < 3000; v += step {
			if v == 0 && pi%2 == 0 {
				p.Dims[0].Append(Null)
			} else if v == 0 {
				continue
			} else {
				p.Dims[0].Append(Str(fmt.Sprintf("k%05d", v)))
			}
			p.Times = append(p.Times, int64(pi))
			for _, a := range p.Aggs {
				a.Grow(1)
			}
			i := p.Len() - 1
			p.Aggs[0].Longs[i], p.Aggs[0].Null[i] = int64(v*pi-7), false
			p.Aggs[1].Longs[i] = 1
		}
		parts = append(parts, p)
	}
	parts = append(parts, &Partial{Type: q.Type})
	old := parallelMergeRows
	defer func() { parallelMergeRows = old }()
	merge := func(e *Engine, from int) *Partial {
		parallelMergeRows = from
		out, err := e.Merge(q, parts)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	serial := merge(New(Options{Parallelism: 1}), 1<<30)
	for _, n := range []int{2, 3, 8} {
		par := merge(New(Options{Parallelism: n}), 1)
		if !reflect.DeepEqual(serial.Dims[0], par.Dims[0]) || !reflect.DeepEqual(serial.Aggs[0].Longs, par.Aggs[0].Longs) ||
			!reflect.DeepEqual(serial.Aggs[1].Longs, par.Aggs[1].Longs) || !reflect.DeepEqual(serial.Aggs[0].Null, par.Aggs[0].Null) {
			t.Errorf("parallelism %d: merged partial differs from the serial merge", n)
		}
		if serial.Dims[0].Strs[1] != "k00001" || !serial.Dims[0].Null[0] || par.Len() != 3000 {
			t.Errorf("parallelism %d: unexpected merge of %d rows", n, par.Len())
		}
	}
	// A budget the whole exceeds but each half fits.
	parallelMergeRows = 1
	e := New(Options{Parallelism: 2, MaxGroupByBytes: 3000 * (6 + rowOverhead(1, 2)) * 3 / 4})
	if _, err := e.Merge(q, parts); err == nil || query.AsError(err).Kind != query.ResourceLimit {
		t.Errorf("budget: %v", err)
	}
}
