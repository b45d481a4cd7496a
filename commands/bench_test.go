package commands

import (
	"encoding/json"
	"testing"
)

// The config write path: the leader parses the request body and encodes the
// command; every node decodes it and encodes the merged config for the audit
// trail.

func BenchmarkParseCoordinatorConfigPatch(b *testing.B) {
	body := []byte(`{"maxSegmentsToMove":123}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := ParseCoordinatorConfigPatch(body); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCommand() SetCoordinatorConfig {
	v := int32(123)
	return SetCoordinatorConfig{Patch: CoordinatorConfigPatch{MaxSegmentsToMove: &v}}
}

func BenchmarkEncode(b *testing.B) {
	cmd := benchCommand()
	audit := Audit{Author: "bench", Comment: "load", IP: "127.0.0.1"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Encode(cmd, 1700000000000, audit); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	data, _ := Encode(benchCommand(), 1700000000000, Audit{Author: "bench", IP: "127.0.0.1"})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCoordinatorConfigJSON(b *testing.B) {
	c := DefaultCoordinatorConfig()
	c.DecommissioningNodes = StringList{"host1:8083", "host2:8083"}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for i := 0; i < b.N; i++ {
			if _, err := c.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
