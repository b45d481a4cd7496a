package input

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// jsonPath is a compiled JSONPath expression of the subset flattenSpec path
// fields use: $ (root), .name, ['name'], [n], [*], .. (deep scan) and a
// trailing function: length(), size(), min(), max(), avg(), sum(),
// stddev(), first(), last(), keys(), concat()? (not supported).
type jsonPath struct {
	steps []pathStep
	fn    string // trailing function name, "" for none
	src   string
}

type stepKind uint8

const (
	stepField stepKind = iota
	stepIndex
	stepWildcard
	stepDeep // .. followed by the field in name ("" for ..*)
)

type pathStep struct {
	kind  stepKind
	name  string
	index int
}

var pathFuncs = []string{"length", "size", "min", "max", "avg", "sum", "stddev", "first", "last", "keys"}

// compileJSONPath parses a JSONPath expression.
func compileJSONPath(src string) (*jsonPath, error) {
	p := &jsonPath{src: src}
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("JSONPath %q must start with $", src)
	}
	i := 1
	for i < len(s) {
		switch s[i] {
		case '.':
			deep := false
			i++
			if i < len(s) && s[i] == '.' {
				deep = true
				i++
			}
			if i < len(s) && s[i] == '*' {
				i++
				if deep {
					p.steps = append(p.steps, pathStep{kind: stepDeep})
				} else {
					p.steps = append(p.steps, pathStep{kind: stepWildcard})
				}
				continue
			}
			if deep && i < len(s) && s[i] == '[' {
				p.steps = append(p.steps, pathStep{kind: stepDeep})
				continue
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != '(' {
				j++
			}
			name := s[i:j]
			if name == "" {
				return nil, fmt.Errorf("JSONPath %q: empty field name at %d", src, i)
			}
			if j < len(s) && s[j] == '(' {
				if !strings.HasPrefix(s[j:], "()") || j+2 != len(s) || deep {
					return nil, fmt.Errorf("JSONPath %q: functions must come last and take no arguments", src)
				}
				if !slices.Contains(pathFuncs, name) {
					return nil, fmt.Errorf("JSONPath %q: unsupported function %s()", src, name)
				}
				p.fn = name
				return p, nil
			}
			if deep {
				p.steps = append(p.steps, pathStep{kind: stepDeep, name: name})
			} else {
				p.steps = append(p.steps, pathStep{kind: stepField, name: name})
			}
			i = j
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("JSONPath %q: unclosed [", src)
			}
			inner := strings.TrimSpace(s[i+1 : i+end])
			if q := len(inner); q >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[q-1] == inner[0] {
				// a quoted name may contain ']' only in principle; names with it are not supported
				p.steps = append(p.steps, pathStep{kind: stepField, name: inner[1 : q-1]})
			} else if inner == "*" {
				p.steps = append(p.steps, pathStep{kind: stepWildcard})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("JSONPath %q: unsupported selector [%s]", src, inner)
				}
				p.steps = append(p.steps, pathStep{kind: stepIndex, index: n})
			}
			i += end + 1
		default:
			return nil, fmt.Errorf("JSONPath %q: unexpected %q at %d", src, s[i], i)
		}
	}
	return p, nil
}

// eval applies the path to a decoded document (encoding/json with
// UseNumber). A path with wildcards or deep scans yields a list; a missing
// element yields nil.
func (p *jsonPath) eval(doc any) any {
	cur := []any{doc}
	multi := false
	for _, st := range p.steps {
		var next []any
		for _, v := range cur {
			switch st.kind {
			case stepField:
				if m, ok := v.(map[string]any); ok {
					if x, ok := m[st.name]; ok {
						next = append(next, x)
					} else if !multi {
						next = append(next, nil)
					}
				} else if !multi {
					next = append(next, nil)
				}
			case stepIndex:
				if a, ok := v.([]any); ok {
					i := st.index
					if i < 0 {
						i += len(a)
					}
					if i >= 0 && i < len(a) {
						next = append(next, a[i])
						continue
					}
				}
				if !multi {
					next = append(next, nil)
				}
			case stepWildcard:
				multi = true
				switch t := v.(type) {
				case []any:
					next = append(next, t...)
				case map[string]any:
					for _, k := range sortedKeys(t) {
						next = append(next, t[k])
					}
				}
			case stepDeep:
				multi = true
				next = deepScan(v, st.name, next)
			}
		}
		cur = next
	}
	var out any
	if multi {
		list := make([]any, 0, len(cur))
		for _, v := range cur {
			if v != nil {
				list = append(list, v)
			}
		}
		out = list
	} else if len(cur) == 1 {
		out = cur[0]
	}
	if p.fn != "" {
		return applyPathFunc(p.fn, out)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// deepScan collects the values of every field called name below v (every
// value when name is empty), depth first.
func deepScan(v any, name string, out []any) []any {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if name == "" || k == name {
				out = append(out, t[k])
			}
			out = deepScan(t[k], name, out)
		}
	case []any:
		for _, e := range t {
			if name == "" {
				out = append(out, e)
			}
			out = deepScan(e, name, out)
		}
	}
	return out
}

// applyPathFunc implements JsonPath's aggregate functions. Numeric results
// of min/max/avg/sum/stddev are doubles, as in Jayway JsonPath.
func applyPathFunc(fn string, v any) any {
	switch fn {
	case "length", "size":
		switch t := v.(type) {
		case []any:
			return json.Number(strconv.Itoa(len(t)))
		case map[string]any:
			return json.Number(strconv.Itoa(len(t)))
		case string:
			return json.Number(strconv.Itoa(len(t)))
		}
		return nil
	case "keys":
		if m, ok := v.(map[string]any); ok {
			keys := sortedKeys(m)
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = k
			}
			return out
		}
		return nil
	case "first", "last":
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return nil
		}
		if fn == "first" {
			return a[0]
		}
		return a[len(a)-1]
	}
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	var nums []float64
	for _, e := range a {
		if n, ok := e.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				nums = append(nums, f)
			}
		}
	}
	if len(nums) == 0 {
		return nil
	}
	var r float64
	switch fn {
	case "min":
		r = slices.Min(nums)
	case "max":
		r = slices.Max(nums)
	case "sum":
		for _, f := range nums {
			r += f
		}
	case "avg":
		for _, f := range nums {
			r += f
		}
		r /= float64(len(nums))
	case "stddev":
		mean := 0.0
		for _, f := range nums {
			mean += f
		}
		mean /= float64(len(nums))
		for _, f := range nums {
			r += (f - mean) * (f - mean)
		}
		r = math.Sqrt(r / float64(len(nums)))
	}
	return r
}
