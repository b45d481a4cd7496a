package input

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"strata/expr"
)

// benchRows makes n NDJSON records shaped like the shared benchmark data set.
func benchRows(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp":"2024-01-0%dT%02d:%02d:%02dZ","channel":"#ch%02d","page":"Page_%06d","user":"user%07d",`+
			`"country":"C%03d","city":"City%04d","namespace":"ns%d","isRobot":"%t","isNew":"%t","added":%d,"deleted":%d,`+
			`"delta":%d,"commentLength":%d,"price":%d.%02d}`+"\n",
			1+i%7, i/3600%24, i/60%60, i%60, i%23, i*7919%5000, i*104729%300000, i%200, i%50, i%10, i%3 == 0, i%5 == 0,
			i%1000, i%300, i%1000-i%300, i%500, i%300, i%100)
	}
	return b.Bytes()
}

var benchCols = []Column{{"timestamp", KindString}, {"channel", KindString}, {"page", KindString}, {"user", KindString},
	{"country", KindString}, {"city", KindString}, {"namespace", KindString}, {"isRobot", KindString}, {"isNew", KindString},
	{"added", KindLong}, {"deleted", KindLong}, {"delta", KindLong}, {"commentLength", KindLong}, {"price", KindDouble}}

// BenchmarkJSONReader decodes benchmark-shaped records, keeping values in a
// buffer reused from run to run, as the prefetcher has range readers do.
func BenchmarkJSONReader(b *testing.B) {
	data := benchRows(100_000)
	f, _ := ParseFormat([]byte(`{"type":"json"}`))
	rows := make([]expr.Value, 512*len(benchCols))
	buf := make([]byte, 0, len(data)+keepBufSize)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		r, _ := f.NewReader(bytes.NewReader(data), benchCols, "bench")
		r.(*jsonReader).keepValues()
		r.(*jsonReader).useBuffer(buf)
		for i := 0; ; i = (i + 1) % 512 {
			err := r.Next(rows[i*len(benchCols) : (i+1)*len(benchCols)])
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)*100_000/b.Elapsed().Seconds(), "rows/s")
}
