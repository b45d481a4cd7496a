package fsm

import (
	"errors"
	"fmt"
)

// Kind classifies an apply error so the HTTP layer can pick a status.
type Kind int

// Error kinds.
const (
	KindInvalid  Kind = iota + 1 // bad input → 400
	KindNotFound                 // → 404
	KindConflict                 // state forbids it now → 409
	KindFatal                    // the entry cannot be applied by this binary
)

// Error is a typed apply error returned to the proposer.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Invalid builds a KindInvalid error.
func Invalid(format string, args ...any) error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

// NotFound builds a KindNotFound error.
func NotFound(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Msg: fmt.Sprintf(format, args...)}
}

// Conflict builds a KindConflict error.
func Conflict(format string, args ...any) error {
	return &Error{Kind: KindConflict, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err, or 0 when it is not an apply error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// IsFatal reports an entry that this binary cannot apply.
func IsFatal(err error) bool { return KindOf(err) == KindFatal }
