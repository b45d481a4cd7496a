package input

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"strata/expr"
)

// readAll reads every row of every split, rendering values with String and
// parse errors as "ERR".
func readAll(t *testing.T, srcJSON, fmtJSON string, cols []Column) []string {
	t.Helper()
	src, err := ParseSource([]byte(srcJSON))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFormat([]byte(fmtJSON))
	if err != nil {
		t.Fatal(err)
	}
	splits, err := src.Splits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sp := range splits {
		fr, err := Open(context.Background(), sp, f, cols, src.SystemFields())
		if err != nil {
			t.Fatal(err)
		}
		row := make([]expr.Value, len(cols))
		for {
			err := fr.Next(row)
			if err == io.EOF {
				break
			}
			var pe *ParseError
			if errors.As(err, &pe) {
				out = append(out, "ERR")
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(row))
			for i, v := range row {
				parts[i] = v.String()
			}
			out = append(out, strings.Join(parts, "|"))
		}
		fr.Close()
	}
	return out
}

func check(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func inline(data string) string {
	q, _ := json.Marshal(data)
	return `{"type":"inline","data":` + string(q) + `}`
}

// A JSON object or a nested list read into a string column becomes the text
// Druid's string dimension stores: Java's toString of the Map or List the
// JSON parser made ({k=v, ...} in the document's key order, [a, b]), as
// Druid's corpus expects (c_empty_obj_nested = '{o1={}, o2=[], o3=null}',
// a multi-value element ["3",["4","5"]] grouped as [3, [4, 5]]).
func TestJSONNestedIntoStringColumn(t *testing.T) {
	data := `{"o":{"z":{},"a":[],"m":null,"n":[1,2.50,"x",true,{"k":1e2}]},"mv":["1",["2"],["3",["4","5"]],null,""]}
{"o":{"o1":{},"o2":[],"o3":null},"mv":[{"b":1,"a":"s"}]}`
	for _, slow := range []bool{false, true} {
		format, first := `{"type":"json"}`, "null<STRING>"
		if slow { // a path column makes the reader decode each record whole
			format, first = `{"type":"json","flattenSpec":{"useFieldDiscovery":true,"fields":[{"type":"path","name":"first","expr":"$.mv[1]"}]}}`, `[2]`
		}
		got := readAll(t, inline(data), format, []Column{{"o", KindString}, {"mv", KindString}, {"first", KindString}})
		check(t, got,
			`"{z={}, a=[], m=null, n=[1, 2.5, x, true, {k=100.0}]}"|[1, [2], [3, [4, 5]], null, ]|`+first,
			`"{o1={}, o2=[], o3=null}"|[{b=1, a=s}]|null<STRING>`)
	}
}

func TestJSONTypes(t *testing.T) {
	data := `{"s":"a","l":"12","d":1.5,"tags":["x","y"],"b":true}
{"s":57,"l":3.9,"d":"2","tags":"z","n":null}

{"s":1.5e3,"l":"","d":7,"obj":{"k":1}}  {"s":"esc\"\u00e9\ud83d\ude00","l":-4}
{"s":"bad","l":"x12"}
{"s":"ok","l":1}`
	cols := []Column{{"s", KindString}, {"l", KindLong}, {"d", KindDouble}, {"tags", KindString}, {"b", KindLong}, {"obj", KindString}}
	got := readAll(t, inline(data), `{"type":"json"}`, cols)
	check(t, got,
		`"a"|12|1.5|[x, y]|1|null<STRING>`,
		`"57"|3|2.0|"z"|null<LONG>|null<STRING>`,
		`"1500.0"|null<LONG>|7.0|null<STRING>|null<LONG>|"{k=1}"`,
		`"esc\"é😀"|-4|null<DOUBLE>|null<STRING>|null<LONG>|null<STRING>`,
		"ERR",
		`"ok"|1|null<DOUBLE>|null<STRING>|null<LONG>|null<STRING>`)
}

func TestJSONMultiLineAndBroken(t *testing.T) {
	data := "{\"a\":\n  \"x\",\n \"b\": 2}\n{\"a\": \"y\" oops}\n{\"a\":\"z\"}\n{\"a\":"
	got := readAll(t, inline(data), `{"type":"json"}`, []Column{{"a", KindString}, {"b", KindLong}})
	check(t, got, `"x"|2`, "ERR", `"z"|null<LONG>`, "ERR")
}

func TestJSONFlattenSpec(t *testing.T) {
	data := `{"timestamp": "2013-08-31T01:02:33Z", "values": [0,1,2,3,4], "o": {"p": {"q": "deep"}, "arr": [{"v": 1}, {"v": 2}]}}`
	format := `{"type":"json","flattenSpec":{"useFieldDiscovery":true,"fields":[
		{"type":"path","name":"len","expr":"$.values.length()"},
		{"type":"path","name":"min","expr":"$.values.min()"},
		{"type":"path","name":"max","expr":"$.values.max()"},
		{"type":"path","name":"sum","expr":"$.values.sum()"},
		{"type":"path","name":"avg","expr":"$.values.avg()"},
		{"type":"path","name":"q","expr":"$.o.p['q']"},
		{"type":"jq","name":"q2","expr":".o.p.q"},
		{"type":"tree","name":"q3","nodes":["o","p","q"]},
		{"type":"path","name":"vs","expr":"$.o.arr[*].v"},
		{"type":"path","name":"second","expr":"$.values[1]"},
		{"type":"root","name":"ts","expr":"timestamp"}]}}`
	cols := []Column{{"timestamp", KindString}, {"len", KindLong}, {"min", KindLong}, {"max", KindLong},
		{"sum", KindLong}, {"avg", KindDouble}, {"q", KindString}, {"q2", KindString}, {"q3", KindString},
		{"vs", KindLongArray}, {"second", KindLong}, {"ts", KindString}, {"missing", KindString}, {"min", KindString}}
	got := readAll(t, inline(data), format, cols)
	check(t, got, `"2013-08-31T01:02:33Z"|5|0|4|10|2.0|"deep"|"deep"|"deep"|[1, 2]|1|"2013-08-31T01:02:33Z"|null<STRING>|"0.0"`)

	// Without discovery only declared fields are read.
	got = readAll(t, inline(data), `{"type":"json","flattenSpec":{"useFieldDiscovery":false,"fields":[{"type":"root","name":"ts","expr":"timestamp"}]}}`,
		[]Column{{"timestamp", KindString}, {"ts", KindString}})
	check(t, got, `null<STRING>|"2013-08-31T01:02:33Z"`)
}

func TestCSV(t *testing.T) {
	data := "skip me\nts,page,added\n2024-01-01,a,3\n2024-01-02,\"b,c\",x\n2024-01-03,d\x01e,\n\n2024-01-04,f,5\n"
	cols := []Column{{"ts", KindString}, {"page", KindString}, {"added", KindLong}}
	got := readAll(t, inline(data), `{"type":"csv","findColumnsFromHeader":true,"skipHeaderRows":1}`, cols)
	check(t, got, `"2024-01-01"|"a"|3`, "ERR", `"2024-01-03"|[d, e]|null<LONG>`, `"2024-01-04"|"f"|5`)

	got = readAll(t, inline("1,2\n3,4\n"), `{"type":"csv","columns":["x","y"]}`, []Column{{"y", KindDouble}, {"z", KindString}})
	check(t, got, "2.0|null<STRING>", "4.0|null<STRING>")

	got = readAll(t, inline("a|b\tc\nd|e\t\"f\"\n"), `{"type":"tsv","columns":["x","y"],"listDelimiter":"|"}`,
		[]Column{{"x", KindString}, {"y", KindString}})
	check(t, got, `[a, b]|"c"`, `[d, e]|"\"f\""`)

	got = readAll(t, inline("a;1\nb;2\n"), `{"type":"tsv","columns":["x","y"],"delimiter":";"}`,
		[]Column{{"x", KindString}, {"y", KindLong}})
	check(t, got, `"a"|1`, `"b"|2`)
}

func TestFormatErrors(t *testing.T) {
	for _, f := range []string{`{"type":"csv"}`, `{"type":"parquet"}`, `{}`, `{"type":"csv","columns":["a"],"delimiter":";"}`,
		`{"type":"json","flattenSpec":{"fields":[{"type":"path","name":"x","expr":"values"}]}}`,
		`{"type":"json","flattenSpec":{"fields":[{"type":"path","name":"x","expr":"$.a.foo()"}]}}`, `nope`} {
		if _, err := ParseFormat([]byte(f)); err == nil {
			t.Errorf("format %s: no error", f)
		}
	}
	for _, s := range []string{`{"type":"local"}`, `{"type":"local","baseDir":"/tmp"}`, `{"type":"s3","uris":["s3://a/b"]}`,
		`{"type":"http","uris":["ftp://x/y"]}`, `{"type":"inline"}`, `{"type":"http","uris":["http://x/y"],"httpAuthenticationPassword":{"type":"environment","variable":"HOME"}}`,
		`{"type":"local","files":["a"],"systemFields":["__nope"]}`} {
		if _, err := ParseSource([]byte(s)); err == nil {
			t.Errorf("source %s: no error", s)
		}
	}
}

func TestLocalAndCompression(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"v":"gz"}` + "\n"))
	zw.Close()
	write("a/one.json.gz", gz.Bytes())
	write("b/two.json", []byte(`{"v":"plain"}`))
	write("b/empty.json", nil)
	write("b/skip.txt", []byte(`{"v":"no"}`))
	write("magic.json", gz.Bytes()) // gzip without the extension
	var zs bytes.Buffer
	enc, _ := zstd.NewWriter(&zs)
	enc.Write([]byte(`{"v":"zstd"}`))
	enc.Close()
	write("c/three.json.zst", zs.Bytes())

	cols := []Column{{"v", KindString}, {"__file_path", KindString}}
	got := readAll(t, `{"type":"local","baseDir":"`+dir+`","filter":"*.json*","systemFields":["__file_path"]}`, `{"type":"json"}`, cols)
	check(t, got,
		`"gz"|"`+filepath.Join(dir, "a/one.json.gz")+`"`,
		`"plain"|"`+filepath.Join(dir, "b/two.json")+`"`,
		`"zstd"|"`+filepath.Join(dir, "c/three.json.zst")+`"`,
		`"gz"|"`+filepath.Join(dir, "magic.json")+`"`)

	got = readAll(t, `{"type":"local","files":["`+filepath.Join(dir, "b/two.json")+`"]}`, `{"type":"json"}`, cols[:1])
	check(t, got, `"plain"`)

	src, _ := ParseSource([]byte(`{"type":"local","files":["` + filepath.Join(dir, "nope.json") + `"]}`))
	if _, err := src.Splits(context.Background()); err == nil {
		t.Fatal("missing file: no error")
	}
}

func TestHTTPSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != "me" || p != "secret" || r.Header.Get("X-Test") != "1" {
			http.Error(w, "denied", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("a,b\n1,2\n"))
	}))
	defer srv.Close()
	spec := `{"type":"http","uris":["` + srv.URL + `/data.csv"],"httpAuthenticationUsername":"me",
		"httpAuthenticationPassword":{"type":"default","password":"secret"},"requestHeaders":{"X-Test":"1"}}`
	got := readAll(t, spec, `{"type":"csv","findColumnsFromHeader":true}`, []Column{{"b", KindLong}, {"__file_uri", KindString}})
	check(t, got, `2|null<STRING>`)
	src, _ := ParseSource([]byte(spec))
	if m := src.Spec(); strings.Contains(strings.Join([]string{m["httpAuthenticationPassword"].(map[string]any)["type"].(string)}, ""), "secret") {
		t.Fatal("password leaked into the spec")
	}
	bad, _ := ParseSource([]byte(`{"type":"http","uris":["` + srv.URL + `/x"]}`))
	sp, _ := bad.Splits(context.Background())
	f, _ := ParseFormat([]byte(`{"type":"json"}`))
	if _, err := Open(context.Background(), sp[0], f, nil, nil); err == nil {
		t.Fatal("401: no error")
	}
}

func FuzzJSONReader(f *testing.F) {
	f.Add([]byte(`{"a":"x","b":[1,2],"c":{"d":null}}` + "\n" + `{"a":1.5e3}`))
	f.Add([]byte(`{"a":"\u00e9\ud83d"}{"b":tru`))
	f.Add([]byte("{\"a\":\n\"b\"}\n\n[1]"))
	format, _ := ParseFormat([]byte(`{"type":"json"}`))
	cols := []Column{{"a", KindString}, {"b", KindLongArray}, {"c", KindString}}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := format.NewReader(bytes.NewReader(data), cols, "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		row := make([]expr.Value, len(cols))
		for i := 0; i < 10000; i++ {
			err := r.Next(row)
			if err == io.EOF {
				return
			}
			var pe *ParseError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("unexpected error %v", err)
			}
		}
		t.Fatal("reader does not make progress")
	})
}

func FuzzJSONPath(f *testing.F) {
	f.Add("$.a.b[0]")
	f.Add("$..x.length()")
	f.Add("$['a'][*].min()")
	f.Fuzz(func(t *testing.T, path string) {
		p, err := compileJSONPath(path)
		if err != nil {
			return
		}
		p.eval(map[string]any{"a": []any{map[string]any{"b": "c"}}})
	})
}
