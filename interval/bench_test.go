package interval

import (
	"testing"
	"time"
)

func BenchmarkParseTime(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := ParseTime("2013-08-31T01:02:33.123Z"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormatMillis(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := 0; i < b.N; i++ {
		buf = AppendMillis(buf[:0], 1377910953123, nil)
	}
}

func BenchmarkJodaParse(b *testing.B) {
	f, err := CompileJoda("yyyy-MM-dd HH:mm:ss")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := f.ParseMillis("2013-08-31 01:02:33", time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTimestampAuto(b *testing.B) {
	parse, err := ParseTimestampFormat("auto")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := parse("2013-08-31T01:02:33.123Z"); err != nil {
			b.Fatal(err)
		}
	}
}
