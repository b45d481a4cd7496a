package commands

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Every envelope Encode writes takes the fast path, escapes aside.
func TestEncodeOutputTakesFastPath(t *testing.T) {
	v := int32(7)
	cases := []struct {
		cmd   Command
		audit Audit
		fast  bool
	}{
		{SetCoordinatorConfig{Patch: CoordinatorConfigPatch{MaxSegmentsToMove: &v}}, Audit{"alice", "more moves", "10.0.0.1"}, true},
		{SetCoordinatorConfig{}, Audit{}, true},
		{optionalCmd{}, Audit{"bob", "", "::1"}, true},
		{SetWorkerConfig{}, Audit{"carol", `say "hi"`, "127.0.0.1"}, false}, // escaped quote
		{SetWorkerConfig{}, Audit{"dörte", "", ""}, false},                  // non-ASCII
	}
	for i, tc := range cases {
		b, err := Encode(tc.cmd, -1700000000000+int64(i), tc.audit)
		if err != nil {
			t.Fatal(err)
		}
		env, ok := decodeEnvelopeFast(b)
		if ok != tc.fast {
			t.Errorf("case %d: fast path taken = %v, want %v (%s)", i, ok, tc.fast, b)
		}
		fenv, fcmd, ferr := Decode(b)
		senv, scmd, serr := decodeJSON(b)
		if ferr != nil || serr != nil {
			t.Fatalf("case %d: Decode %v, decodeJSON %v", i, ferr, serr)
		}
		if !reflect.DeepEqual(fenv, senv) || !reflect.DeepEqual(fcmd, scmd) {
			t.Errorf("case %d: paths disagree:\nfast %+v %+v\njson %+v %+v", i, fenv, fcmd, senv, scmd)
		}
		if ok && (env.Audit != tc.audit || env.Type != tc.cmd.CommandType()) {
			t.Errorf("case %d: fast path read %+v", i, env)
		}
	}
}

// Inputs near the canonical form: each must give what encoding/json gives.
func TestDecodePathsAgree(t *testing.T) {
	const head = `{"v":1,"type":"coordinator.config.set","time":5,"audit":{"author":"a","comment":"c","ip":"i"},"payload":`
	for _, in := range []string{
		head + `{"patch":{"maxSegmentsToMove":3}}}`,
		head + `{"patch":{}},"extra":1}`,              // a key after the payload
		head + `{"patch":{}},"payload":{"x":1}}`,      // a second payload key
		head + ` {"patch":{}} }`,                      // spaces round the payload
		head + `{"patch":{"maxSegmentsToMove":"x"}}}`, // bad payload
		head + `}`,
		strings.Replace(head, `"v":1`, `"v":01`, 1) + `{}}`,
		strings.Replace(head, `"v":1`, `"v":-0`, 1) + `{}}`,
		strings.Replace(head, `"v":1`, `"v":2`, 1) + `{}}`,
		strings.Replace(head, `"time":5`, `"time":9223372036854775808`, 1) + `{}}`,
		strings.Replace(head, `"time":5`, `"time":-9223372036854775808`, 1) + `{}}`,
		strings.Replace(head, `"time":5`, `"time":5e3`, 1) + `{}}`,
		`{"v":1,"type":"no.such","ignorable":true,"time":1,"audit":{"author":"","comment":"","ip":""},"payload":nope}`,
		`{"v":1,"type":"no.such","ignorable":true,"time":1,"audit":{"author":"","comment":"","ip":""},"payload":[1]}`,
		`{"v":1,"type":"no.such","time":1,"audit":{"author":"","comment":"","ip":""},"payload":{}}`,
	} {
		checkDecodePathsAgree(t, []byte(in))
	}
}

func checkDecodePathsAgree(t *testing.T, b []byte) {
	t.Helper()
	fenv, fcmd, ferr := Decode(b)
	senv, scmd, serr := decodeJSON(b)
	if (ferr == nil) != (serr == nil) || errors.Is(ferr, ErrUnknownCommand) != errors.Is(serr, ErrUnknownCommand) {
		t.Fatalf("%q: Decode error %v, encoding/json error %v", b, ferr, serr)
	}
	if ferr == nil && (!reflect.DeepEqual(fenv, senv) || !reflect.DeepEqual(fcmd, scmd)) {
		t.Fatalf("%q: paths disagree:\nfast %+v %#v\njson %+v %#v", b, fenv, fcmd, senv, scmd)
	}
}

// FuzzDecodeFastPath: whatever the bytes, Decode (fast path first) and
// encoding/json's path agree on success, the envelope and the command.
func FuzzDecodeFastPath(f *testing.F) {
	v := int32(9)
	for _, a := range []Audit{{"a", "b", "c"}, {}, {"x<y", "", ""}} {
		b, _ := Encode(SetCoordinatorConfig{Patch: CoordinatorConfigPatch{MaxSegmentsToMove: &v}}, 1700000000000, a)
		f.Add(b)
		b, _ = Encode(optionalCmd{}, -3, a)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodePathsAgree(t, b)
	})
}
