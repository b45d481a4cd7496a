package broker

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error is a query failure as clients see it (QUERY-SEMANTICS §1.1): either
// a legacy query exception (Code is a legacy code such as "Query timeout",
// wrapped in the structured envelope with errorCode "legacyQueryException")
// or a natively structured error (Code "druidException", e.g. invalid
// input). Historicals answer with the same body, which the broker passes on.
type Error struct {
	Status    int
	Code      string // the "error" member
	ErrorCode string
	Persona   string
	Category  string
	Message   string
	Class     string
	Host      string
	// Context holds the error's details for the body's context member
	// (structured errors only; legacy ones carry host and class there).
	Context map[string]string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Legacy error codes (Druid's QueryException).
const (
	CodeJSONParse       = "Json parse failed"
	CodeContextParse    = "Query context parse failed"
	CodeResourceLimit   = "Resource limit exceeded"
	CodeCapacity        = "Query capacity exceeded"
	CodeUnsupported     = "Unsupported query"
	CodeInterrupted     = "Query interrupted"
	CodeUnknown         = "Unknown exception"
	CodeCancelled       = "Query cancelled"
	CodeTimeout         = "Query timeout"
	codeStructured      = "druidException"
	legacyErrorCode     = "legacyQueryException"
	personaUser         = "USER"
	personaOperator     = "OPERATOR"
	categoryInvalid     = "INVALID_INPUT"
	categoryRuntime     = "RUNTIME_FAILURE"
	categoryUncategoriz = "UNCATEGORIZED"
	categoryUnavailable = "SERVICE_UNAVAILABLE"
)

// legacyStatus maps a legacy code to its HTTP status and category
// (QueryException.FailType and QueryExceptionCompat).
func legacyStatus(code string) (int, string) {
	switch code {
	case CodeJSONParse, CodeContextParse, CodeResourceLimit:
		return http.StatusBadRequest, categoryInvalid
	case "Unauthorized request":
		return http.StatusUnauthorized, "UNAUTHORIZED"
	case CodeCapacity:
		return http.StatusTooManyRequests, "CAPACITY_EXCEEDED"
	case CodeUnsupported:
		return http.StatusNotImplemented, "UNSUPPORTED"
	case CodeInterrupted, "Unsupported operation", CodeUnknown, "Truncated response context":
		return http.StatusInternalServerError, categoryRuntime
	case CodeCancelled:
		return http.StatusInternalServerError, "CANCELED"
	case CodeTimeout:
		return http.StatusGatewayTimeout, "TIMEOUT"
	}
	return http.StatusInternalServerError, categoryUncategoriz
}

// legacyClass is the Java class Druid names in errorClass (all in
// org.apache.druid.query).
var legacyClass = map[string]string{
	CodeJSONParse:     "org.apache.druid.query.BadJsonQueryException",
	CodeContextParse:  "org.apache.druid.query.BadQueryContextException",
	CodeResourceLimit: "org.apache.druid.query.ResourceLimitExceededException",
	CodeCapacity:      "org.apache.druid.query.QueryCapacityExceededException",
	CodeUnsupported:   "org.apache.druid.query.QueryUnsupportedException",
	CodeInterrupted:   "org.apache.druid.query.QueryInterruptedException",
	CodeUnknown:       "org.apache.druid.query.QueryInterruptedException",
	CodeCancelled:     "org.apache.druid.query.QueryInterruptedException",
	CodeTimeout:       "org.apache.druid.query.QueryTimeoutException",
}

// Legacy returns a legacy query exception raised on host.
func Legacy(code, host, format string, args ...any) *Error {
	status, cat := legacyStatus(code)
	return &Error{Status: status, Code: code, ErrorCode: legacyErrorCode, Persona: personaOperator, Category: cat,
		Message: fmt.Sprintf(format, args...), Class: legacyClass[code], Host: host}
}

// InvalidInput returns a structured invalid-input error (400).
func InvalidInput(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: codeStructured, ErrorCode: "invalidInput", Persona: personaUser,
		Category: categoryInvalid, Message: fmt.Sprintf(format, args...)}
}

// IsLegacy reports whether the error carries a legacy code.
func (e *Error) IsLegacy() bool { return e.Code != codeStructured }

// errorBody is the JSON form of Error.
type errorBody struct {
	Error        string            `json:"error"`
	ErrorClass   *string           `json:"errorClass,omitempty"`
	Host         *string           `json:"host,omitempty"`
	ErrorCode    string            `json:"errorCode,omitempty"`
	Persona      string            `json:"persona,omitempty"`
	Category     string            `json:"category,omitempty"`
	ErrorMessage string            `json:"errorMessage"`
	Context      map[string]string `json:"context"`
}

// Body renders the error as JSON. Legacy errors carry errorClass and host
// (null when unknown) at the top level and again in context.
func (e *Error) Body() []byte {
	b := errorBody{Error: e.Code, ErrorCode: e.ErrorCode, Persona: e.Persona, Category: e.Category, ErrorMessage: e.Message, Context: map[string]string{}}
	for k, v := range e.Context {
		b.Context[k] = v
	}
	if e.IsLegacy() {
		cls, host := e.Class, e.Host
		b.ErrorClass, b.Host = &cls, &host
		b.Context["host"] = e.Host
		b.Context["errorClass"] = e.Class
		b.Context["legacyErrorCode"] = e.Code
	}
	out, err := json.Marshal(b)
	if err != nil { // unreachable: only strings
		return []byte(`{"error":"Unknown exception"}`)
	}
	return out
}

// ParseErrorBody reads an error answered by a historical. A body that is
// not an error object becomes an "Unknown exception" naming the status.
func ParseErrorBody(status int, body []byte, host string) *Error {
	var b struct {
		Error        string            `json:"error"`
		ErrorClass   string            `json:"errorClass"`
		Host         string            `json:"host"`
		ErrorCode    string            `json:"errorCode"`
		Persona      string            `json:"persona"`
		Category     string            `json:"category"`
		ErrorMessage string            `json:"errorMessage"`
		Context      map[string]string `json:"context"`
	}
	if json.Unmarshal(body, &b) != nil || b.Error == "" {
		return Legacy(CodeUnknown, host, "%s answered HTTP %d: %.300s", host, status, body)
	}
	e := &Error{Status: status, Code: b.Error, ErrorCode: b.ErrorCode, Persona: b.Persona, Category: b.Category,
		Message: b.ErrorMessage, Class: b.ErrorClass, Host: b.Host}
	if e.Host == "" {
		e.Host = host
	}
	if e.IsLegacy() {
		e.Status, e.Category = legacyStatus(e.Code)
	}
	return e
}
