package aggregate

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestWireColumns round-trips columns of every size through both wire
// forms and checks the packed form is the one used for long columns.
func TestWireColumns(t *testing.T) {
	for _, n := range []int{0, 1, PackMin - 1, PackMin, 1000} {
		strs := make([]string, n)
		longs := make([]int64, n)
		bools := make([]bool, n)
		for i := range n {
			switch i % 5 {
			case 0:
				strs[i] = fmt.Sprintf("user%07d", i)
			case 1:
				strs[i] = fmt.Sprintf("user%07d\"\\\n", i)
			case 2:
				strs[i] = "ünïcode " + strings.Repeat("x", i%17)
			case 3:
				strs[i] = ""
			default:
				strs[i] = strs[i-1] + "suffix"
			}
			longs[i] = int64(i*i) - 500
			if i%7 == 0 {
				longs[i] = math.MinInt64
			}
			if i%11 == 0 {
				longs[i] = math.MaxInt64
			}
			bools[i] = i%3 == 0
		}
		check := func(name string, in, out any, raw []byte) {
			t.Helper()
			if !reflect.DeepEqual(in, out) {
				t.Errorf("%s n=%d: round trip differs", name, n)
			}
			if packedForm := len(raw) > 0 && raw[0] == '"'; packedForm != (n >= PackMin) {
				t.Errorf("%s n=%d: packed=%v", name, n, packedForm)
			}
		}
		raw, err := json.Marshal(WireStrings(strs))
		if err != nil {
			t.Fatal(err)
		}
		var s WireStrings
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		check("strings", strs, []string(s), raw)
		raw, _ = json.Marshal(WireLongs(longs))
		var l WireLongs
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		check("longs", longs, []int64(l), raw)
		raw, _ = json.Marshal(WireBools(bools))
		var b WireBools
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		check("bools", bools, []bool(b), raw)
	}
}

// TestWireMalformed feeds broken packed and array forms: errors, no panic.
func TestWireMalformed(t *testing.T) {
	bad := []string{`"!!"`, `"BQ=="`, `"/////w8="`, `[1,`, `[1 2]`, `["a"`, `[true,nul]`, `"CgAB"`}
	for _, in := range bad {
		var s WireStrings
		var l WireLongs
		var b WireBools
		es, el, eb := s.UnmarshalJSON([]byte(in)), l.UnmarshalJSON([]byte(in)), b.UnmarshalJSON([]byte(in))
		if es == nil && el == nil && eb == nil {
			t.Errorf("%s: accepted by every column type", in)
		}
	}
	// A front-coded entry sharing more than the previous string has.
	p := packed([]byte{2, 0, 1, 'a', 5, 0})
	var s WireStrings
	if err := s.UnmarshalJSON(p); err == nil {
		t.Errorf("over-long shared prefix accepted")
	}
}
