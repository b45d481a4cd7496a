package main

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"strata/audit"
	"strata/commands"
)

// entriesLog is an audit.Log over entries in memory.
type entriesLog []audit.Entry

func (l entriesLog) FirstIndex() (uint64, error) { return l[0].Index, nil }
func (l entriesLog) LastIndex() (uint64, error)  { return l[len(l)-1].Index, nil }
func (l entriesLog) Scan(from, to uint64, fn func(audit.Entry) error) error {
	for _, e := range l {
		if e.Index >= from && e.Index <= to {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// `strata log dump` shows a password change without its credentials: the
// log holds only the hash, and the dump shows not even that.
func TestLogDumpRedactsCredentials(t *testing.T) {
	salt, hash := bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 64)
	data, err := commands.Encode(commands.SetCredentials{Name: "analyst", Credentials: commands.HashedCredentials{Salt: salt, Hash: hash, Iterations: 10000}}, 1000, commands.Audit{Author: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := dumpLog(entriesLog{{Index: 1, Term: 1, Type: raft.LogCommand, Data: data}}, &out); err != nil {
		t.Fatal(err)
	}
	for _, secret := range [][]byte{salt, hash} {
		if strings.Contains(out.String(), base64.StdEncoding.EncodeToString(secret)) {
			t.Fatalf("the dump shows credentials: %s", out.String())
		}
	}
	if !strings.Contains(out.String(), `"name":"analyst"`) || !strings.Contains(out.String(), audit.Redacted) {
		t.Fatalf("the dump lost the command: %s", out.String())
	}
}
