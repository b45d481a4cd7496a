package query

import (
	"errors"
	"fmt"
)

// ErrorKind classifies a query failure; the HTTP layer maps it to Druid's
// status code and error body (QUERY-SEMANTICS §1.1).
type ErrorKind int

// Error kinds.
const (
	// InvalidInput: the query is malformed or names unknown types (400,
	// druidException / invalidInput).
	InvalidInput ErrorKind = iota
	// ResourceLimit: a memory or row guardrail was hit (400,
	// "Resource limit exceeded").
	ResourceLimit
	// Timeout: the context timeout expired (504, "Query timeout").
	Timeout
	// Cancelled: the query was cancelled (500, "Query cancelled").
	Cancelled
	// Unsupported: a valid Druid feature this engine does not implement
	// (501, "Unsupported operation").
	Unsupported
	// Internal: anything else, e.g. a damaged segment (500,
	// "Unknown exception").
	Internal
)

// Error is a query failure with a message meant for the client.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return e.Message }

// HTTPStatus is the status code Druid answers with for this kind.
func (e *Error) HTTPStatus() int {
	switch e.Kind {
	case InvalidInput, ResourceLimit:
		return 400
	case Timeout:
		return 504
	case Unsupported:
		return 501
	}
	return 500
}

// LegacyCode is the legacy QueryException "error" string of this kind
// ("druidException" for validation errors, which Druid raises natively).
func (e *Error) LegacyCode() string {
	switch e.Kind {
	case InvalidInput:
		return "druidException"
	case ResourceLimit:
		return "Resource limit exceeded"
	case Timeout:
		return "Query timeout"
	case Cancelled:
		return "Query cancelled"
	case Unsupported:
		return "Unsupported operation"
	}
	return "Unknown exception"
}

// Category is the DruidException category of this kind.
func (e *Error) Category() string {
	switch e.Kind {
	case InvalidInput:
		return "INVALID_INPUT"
	case ResourceLimit:
		return "CAPACITY_EXCEEDED"
	case Timeout:
		return "TIMEOUT"
	case Cancelled:
		return "CANCELED"
	case Unsupported:
		return "UNSUPPORTED"
	}
	return "UNCATEGORIZED"
}

// Invalidf returns an InvalidInput error.
func Invalidf(format string, args ...any) *Error {
	return &Error{Kind: InvalidInput, Message: fmt.Sprintf(format, args...)}
}

// Errorf returns an error of the given kind.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error, wrapping foreign errors as Internal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var qe *Error
	if errors.As(err, &qe) {
		return qe
	}
	return &Error{Kind: Internal, Message: err.Error()}
}
