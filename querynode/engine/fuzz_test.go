package engine

import (
	"encoding/json"
	"fmt"
	"testing"

	"strata/aggregate"
	"strata/querynode/query"
)

// FuzzPartial feeds arbitrary bytes as a data server's partial result:
// decoding, attaching, merging and rendering must fail cleanly, never
// panic.
func FuzzPartial(f *testing.F) {
	q, err := query.Parse([]byte(`{"queryType":"groupBy","dataSource":"w","granularity":"all","intervals":["2024/2025"],
		"dimensions":["d"],"aggregations":[{"type":"count","name":"c"},{"type":"doubleMin","name":"m","fieldName":"x"},
		{"type":"longLast","name":"l","fieldName":"y"},{"type":"cardinality","name":"u","fields":["d"]}]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"type":"groupBy","times":[0,0],"dims":[{"type":"STRING","strs":["a",""],"null":[false,true]}],
		"aggs":[{"kind":"LONG","op":"count","longs":[1,2],"null":[false,false]},{"kind":"DOUBLE","op":"min","doubles":["NaN",1.5],"null":[false,false]},
		{"kind":"LONG","op":"last","longs":[3,4],"null":[false,true],"times":[5,6]},{"kind":"HLL","null":[true,true],"sketches":[null,null]}]}`))
	f.Add([]byte(`{"type":"groupBy"}`))
	f.Add([]byte(`{"type":"groupBy","times":[0],"dims":[null],"aggs":[null,null,null,null]}`))
	f.Add([]byte(`{"type":"groupBy","times":[1],"dims":[{"type":"LONG","longs":[],"null":[false]}]}`))
	// A partial long enough for the packed column forms.
	big := &Partial{Type: q.Type, SortedKeys: true, Dims: []*DimCol{newDimCol("STRING")}}
	for _, a := range q.Aggregations {
		big.Aggs = append(big.Aggs, newAggState(a, aggregate.PackMin))
	}
	for i := range aggregate.PackMin {
		big.Times = append(big.Times, int64(i))
		big.Dims[0].Append(Str(fmt.Sprintf("v%03d", i)))
	}
	if b, err := json.Marshal(big); err == nil {
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	e := New(Options{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Partial
		if json.Unmarshal(b, &p) != nil || p.Attach(q) != nil {
			return
		}
		m, err := e.Merge(q, []*Partial{&p, &p})
		if err != nil {
			return
		}
		_, _ = e.Finalize(q, m)
	})
}
