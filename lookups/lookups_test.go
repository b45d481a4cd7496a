package lookups

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"b":"<B>","a":"A"}}}`: `{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"a":"A","b":"<B>"},"isOneToOne":false}}`,
		`{"lookupExtractorFactory":{"type":"map","map":{},"isOneToOne":true}}`:               `{"version":null,"lookupExtractorFactory":{"type":"map","map":{},"isOneToOne":true}}`,
		`{"version":"2","lookupExtractorFactory":{"type":"cachedNamespace","firstCacheTimeout":0,"injective":true,"extractionNamespace":{"type":"uri","uri":"https://x/c.tsv","pollPeriod":60000,` +
			`"namespaceParseSpec":{"format":"tsv","columns":["k","v"],"delimiter":"|"}}}}`: `{"version":"2","lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"https://x/c.tsv",` +
			`"namespaceParseSpec":{"format":"tsv","columns":["k","v"],"delimiter":"|"},"pollPeriod":60000},"injective":true}}`,
	} {
		c, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := string(c.AppendJSON(nil))
		if got != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
		// The canonical form parses to itself.
		again, err := Parse([]byte(got))
		if err != nil || string(again.AppendJSON(nil)) != got {
			t.Errorf("%s does not round-trip: %v", got, err)
		}
	}
}

func TestReplaces(t *testing.T) {
	c := func(v string) *Container { return &Container{Version: v} }
	for _, x := range []struct {
		next, prior string
		want        bool
	}{{"v2", "v1", true}, {"v1", "v1", false}, {"v1", "v2", false}, {"v1", "", true}, {"", "v1", false}, {"", "", false}, {"10", "9", false}} {
		if got := c(x.next).Replaces(c(x.prior)); got != x.want {
			t.Errorf("%q replaces %q: %v", x.next, x.prior, got)
		}
	}
}

func TestParseRows(t *testing.T) {
	for _, c := range []struct {
		src  URISource
		data string
		want map[string]string
		err  string
	}{
		{URISource{Format: "csv", Columns: []string{"k", "v"}}, "a,A\nb,\"B, with comma\"\n\n", map[string]string{"a": "A", "b": "B, with comma"}, ""},
		{URISource{Format: "csv", Columns: []string{"id", "x", "name"}, KeyColumn: "id", ValueColumn: "name", SkipHeaderRows: 1}, "skip me\n1,x,one\r\n2,y,two\n", map[string]string{"1": "one", "2": "two"}, ""},
		{URISource{Format: "csv", HasHeaderRow: true, KeyColumn: "code", ValueColumn: "country"}, "country,code\nFrance,FR\n", map[string]string{"FR": "France"}, ""},
		{URISource{Format: "tsv", Columns: []string{"k", "v"}}, "a\tA\n", map[string]string{"a": "A"}, ""},
		{URISource{Format: "tsv", Columns: []string{"k", "v"}, Delimiter: "|"}, "a|A\na|AA\n", map[string]string{"a": "AA"}, ""},
		{URISource{Format: "simpleJson"}, "{\"a\":\"A\"}\n{\"b\":2}\n", map[string]string{"a": "A", "b": "2"}, ""},
		{URISource{Format: "customJson", KeyFieldName: "id", ValueFieldName: "name"}, "{\"id\":1,\"name\":\"one\",\"x\":0}\n", map[string]string{"1": "one"}, ""},
		{URISource{Format: "customJson", KeyFieldName: "id", ValueFieldName: "name"}, "{\"id\":1}\n", nil, "line 1: needs [id] and [name]"},
		{URISource{Format: "csv", Columns: []string{"k", "v"}}, "a,A\nb\n", nil, "line 2"},
		{URISource{Format: "simpleJson"}, "{nope\n", nil, "line 1"},
	} {
		got, err := c.src.ParseRows([]byte(c.data))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v %q: error %v, want %q", c.src, c.data, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v %q: %v %v, want %v", c.src, c.data, got, err, c.want)
		}
	}
}

// Any definition either fails to parse or has a canonical form that parses
// back to itself (the FSM stores and snapshots that form).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"version":"v1","lookupExtractorFactory":{"type":"map","map":{"a":"A"}}}`,
		`{"version":null,"lookupExtractorFactory":{"type":"map","map":{},"isOneToOne":true}}`,
		`{"version":"2","lookupExtractorFactory":{"type":"cachedNamespace","injective":true,"extractionNamespace":{"type":"uri","uri":"file:/x.csv","pollPeriod":"PT1M","namespaceParseSpec":{"format":"csv","columns":["k","v"],"keyColumn":"k","skipHeaderRows":1}}}}`,
		`{"lookupExtractorFactory":{"type":"cachedNamespace","extractionNamespace":{"type":"uri","uri":"https://h/x","namespaceParseSpec":{"format":"customJson","keyFieldName":"a","valueFieldName":"b"}}}}`,
		`{"lookupExtractorFactory":{"type":"jdbc"}}`, `[]`, `{"version":3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		canonical := c.AppendJSON(nil)
		again, err := Parse(canonical)
		if err != nil {
			t.Fatalf("canonical %s of %s does not parse: %v", canonical, b, err)
		}
		if got := again.AppendJSON(nil); string(got) != string(canonical) {
			t.Fatalf("canonical form changes: %s -> %s", canonical, got)
		}
	})
}
