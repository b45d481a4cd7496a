// Package commands defines every control-plane state change as a typed command.
//
// A command is one Go type registered under one stable type tag. On the wire it
// travels in a versioned Envelope that also carries the leader-assigned time and
// the audit information of the request that caused it. The FSM (package fsm)
// owns one apply function per command type; nothing else changes state.
//
// Forward compatibility: a node that meets a tag it does not know refuses the
// entry (ErrUnknownCommand) unless the proposer marked the command ignorable,
// which new command types that only add optional state may do, so that a rolling
// upgrade can run old followers behind a new leader.
package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"
)

// EnvelopeVersion is the current envelope format. Bump it when the envelope (not a
// payload) changes shape; Decode accepts every version up to this one.
const EnvelopeVersion = 1

// Audit is who asked for a change and why; it lands in the audit trail.
type Audit struct {
	Author  string `json:"author"`
	Comment string `json:"comment"`
	IP      string `json:"ip"`
}

// Envelope is the encoded form of a command in the Raft log.
type Envelope struct {
	Version   int             `json:"v"`
	Type      string          `json:"type"`
	Ignorable bool            `json:"ignorable,omitempty"`
	TimeMs    int64           `json:"time"` // leader-assigned, UTC epoch millis
	Audit     Audit           `json:"audit"`
	Payload   json.RawMessage `json:"payload"`
}

// Command is a typed state change. CommandType returns its registered tag.
type Command interface {
	CommandType() string
}

// ErrUnknownCommand means an entry carries a tag this binary does not know and
// the entry was not marked ignorable: applying past it would diverge state.
var ErrUnknownCommand = errors.New("unknown command type")

type registration struct {
	typ       reflect.Type
	ignorable bool
}

var (
	regMu    sync.RWMutex
	registry = map[string]registration{}
)

// Register binds a tag to a command type. ignorable marks commands that older
// nodes may skip. Registering the same tag twice panics (a programming error).
func Register(proto Command, ignorable bool) {
	t := reflect.TypeOf(proto)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tag := proto.CommandType()
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[tag]; dup {
		panic("commands: duplicate registration of " + tag)
	}
	registry[tag] = registration{typ: t, ignorable: ignorable}
}

// Types lists the registered tags, sorted.
func Types() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// New returns a zero value of the command registered under tag.
func New(tag string) (Command, bool) {
	regMu.RLock()
	r, ok := registry[tag]
	regMu.RUnlock()
	if !ok {
		return nil, false
	}
	return reflect.New(r.typ).Interface().(Command), true
}

// Encode wraps cmd in an envelope stamped with the leader time and audit info.
func Encode(cmd Command, timeMs int64, audit Audit) ([]byte, error) {
	tag := cmd.CommandType()
	regMu.RLock()
	r, ok := registry[tag]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q is not registered", ErrUnknownCommand, tag)
	}
	payload, err := json.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", tag, err)
	}
	// The bytes json.Marshal(Envelope{...}) would give, appended directly: that
	// spares a second reflection pass and the re-validation of the payload.
	b := make([]byte, 0, len(payload)+len(tag)+len(audit.Author)+len(audit.Comment)+len(audit.IP)+96)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, EnvelopeVersion, 10)
	b = append(b, `,"type":`...)
	b = AppendJSONString(b, tag)
	if r.ignorable {
		b = append(b, `,"ignorable":true`...)
	}
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, timeMs, 10)
	b = append(b, `,"audit":{"author":`...)
	b = AppendJSONString(b, audit.Author)
	b = append(b, `,"comment":`...)
	b = AppendJSONString(b, audit.Comment)
	b = append(b, `,"ip":`...)
	b = AppendJSONString(b, audit.IP)
	b = append(b, `},"payload":`...)
	b = append(b, payload...)
	return append(b, '}'), nil
}

// Decode parses an envelope and its command. For an unknown tag it returns the
// envelope with a nil command: the error is ErrUnknownCommand unless the envelope
// is marked ignorable, in which case the error is nil and the caller skips it.
func Decode(b []byte) (Envelope, Command, error) {
	if env, ok := decodeEnvelopeFast(b); ok {
		// A known command's payload was checked by its decoding; a skipped one's
		// must still be one JSON value, as encoding/json would insist.
		env, cmd, err := decodeCommand(env)
		if err == nil && (cmd != nil || json.Valid(env.Payload)) {
			return env, cmd, nil
		}
		// A payload that does not decode may still be part of an envelope that
		// encoding/json reads differently (say, with a key after the payload):
		// let the general path decide, so that both paths agree.
	}
	return decodeJSON(b)
}

// decodeJSON is Decode through encoding/json, for any envelope not in Encode's
// exact form.
func decodeJSON(b []byte) (Envelope, Command, error) {
	var env Envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return env, nil, fmt.Errorf("decode envelope: %w", err)
	}
	return decodeCommand(env)
}

// decodeCommand checks the envelope version and decodes its payload.
func decodeCommand(env Envelope) (Envelope, Command, error) {
	if env.Version < 1 || env.Version > EnvelopeVersion {
		return env, nil, fmt.Errorf("decode envelope: unsupported version %d (this binary reads up to %d)", env.Version, EnvelopeVersion)
	}
	cmd, ok := New(env.Type)
	if !ok {
		if env.Ignorable {
			return env, nil, nil
		}
		return env, nil, fmt.Errorf("%w: %q (upgrade this node)", ErrUnknownCommand, env.Type)
	}
	if err := json.Unmarshal(env.Payload, cmd); err != nil {
		return env, nil, fmt.Errorf("decode %s payload: %w", env.Type, err)
	}
	return env, cmd, nil
}
