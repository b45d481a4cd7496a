package msq

import (
	"context"
	"errors"
	"fmt"

	"strata/interval"
	"strata/sql"
)

// Error codes (errorReport.error.errorCode) this engine raises.
const (
	CodeCanceled                   = "Canceled"
	CodeCannotParseExternalData    = "CannotParseExternalData"
	CodeColumnNameRestricted       = "ColumnNameRestricted"
	CodeColumnTypeNotSupported     = "ColumnTypeNotSupported"
	CodeDruidException             = "DruidException"
	CodeInsertCannotAllocate       = "InsertCannotAllocateSegment"
	CodeInsertCannotBeEmpty        = "InsertCannotBeEmpty"
	CodeInsertLockPreempted        = "InsertLockPreempted"
	CodeInsertTimeNull             = "InsertTimeNull"
	CodeInsertTimeOutOfBounds      = "InsertTimeOutOfBounds"
	CodeQueryNotSupported          = "QueryNotSupported"
	CodeQueryRuntimeError          = "QueryRuntimeError"
	CodeTooManyBuckets             = "TooManyBuckets"
	CodeTooManyClusteredByColumns  = "TooManyClusteredByColumns"
	CodeTooManyColumns             = "TooManyColumns"
	CodeTooManyInputFiles          = "TooManyInputFiles"
	CodeTooManyPartitions          = "TooManyPartitions"
	CodeTooManyWarnings            = "TooManyWarnings"
	CodeUnknownError               = "UnknownError"
	CodeInvalidNullByte            = "InvalidNullByte"
	CodeTooManySegmentsInTimeChunk = "TooManySegmentsInTimeChunk"
)

// Limits of the engine (Druid's defaults).
const (
	maxColumns          = 2000
	maxClusteredColumns = 1500
	maxTimeChunks       = 5000
	maxResultRows       = 3000
)

// Fault is a query failure with an MSQ error code; it becomes the report's
// errorReport. Fields holds the code's extra members.
type Fault struct {
	Code    string
	Message string
	Fields  map[string]any
	// Stage is the stage the fault happened in, -1 when none.
	Stage int
	// Validation marks faults found while planning, before anything ran.
	// Druid answers those synchronously (HTTP 400) instead of starting a task.
	Validation bool
}

func (f *Fault) Error() string {
	if f.Message == "" {
		return f.Code
	}
	return f.Code + ": " + f.Message
}

// errorJSON is the report's error object.
func (f *Fault) errorJSON() map[string]any {
	m := map[string]any{"errorCode": f.Code}
	if f.Message != "" {
		m["errorMessage"] = f.Message
	}
	for k, v := range f.Fields {
		m[k] = v
	}
	return m
}

func newFault(code, format string, a ...any) *Fault {
	return &Fault{Code: code, Message: fmt.Sprintf(format, a...), Stage: -1}
}

func (f *Fault) with(k string, v any) *Fault {
	if f.Fields == nil {
		f.Fields = map[string]any{}
	}
	f.Fields[k] = v
	return f
}

// invalidInput is a planning error about the statement: Druid's DruidException
// with category INVALID_INPUT.
func invalidInput(format string, a ...any) *Fault {
	f := newFault(CodeDruidException, format, a...)
	f.Validation = true
	return f.with("druidErrorCode", "invalidInput").with("persona", "USER").
		with("category", "INVALID_INPUT").with("context", map[string]any{})
}

// unsupported is a planning error about a construct this engine cannot run.
func unsupported(format string, a ...any) *Fault {
	f := newFault(CodeQueryNotSupported, format, a...)
	f.Validation = true
	return f
}

// CancelReason is a cancellation cause naming the reason the Canceled
// error reports: cancel a query's context with
// context.WithCancelCause(ctx) and cancel(msq.CancelReason("User request")).
// Other causes report "Task shutdown", deadlines "Query timeout".
type CancelReason string

func (r CancelReason) Error() string { return "canceled: " + string(r) }

func canceledFault(cause error) *Fault {
	reason := "Task shutdown"
	var cr CancelReason
	switch {
	case errors.As(cause, &cr):
		reason = string(cr)
	case errors.Is(cause, context.DeadlineExceeded):
		reason = "Query timeout"
	}
	return newFault(CodeCanceled, "Query canceled: %s", reason).with("reason", reason)
}

func timeOutOfBounds(chunk interval.Interval, bounds []interval.Interval) *Fault {
	bs := make([]string, len(bounds))
	for i, b := range bounds {
		bs[i] = b.String()
	}
	return newFault(CodeInsertTimeOutOfBounds,
		"Inserted data contains time chunk[%s] outside of bounds specified by OVERWRITE WHERE%v. "+
			"Expand OVERWRITE WHERE to include it, or filter those rows out with SELECT ... WHERE.", chunk, bs).
		with("interval", chunk.String()).with("intervalBounds", bs)
}

// asFault turns any error into a Fault (UnknownError unless it is one).
func asFault(ctx context.Context, err error) *Fault {
	var f *Fault
	if errors.As(err, &f) {
		return f
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.Err())) {
		return canceledFault(context.Cause(ctx))
	}
	var se *sql.Error
	if errors.As(err, &se) {
		f := invalidInput("%s", se.Error())
		return f
	}
	return newFault(CodeUnknownError, "%v", err).with("message", err.Error())
}
