package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"strata/querynode/broker"
)

// queryIDHeader carries the id of a native query in the response (Druid's
// header name, which clients look for).
const queryIDHeader = "X-Druid-Query-Id"

// responseContextHeader carries the query's response context (QUERY-SEMANTICS §1).
const responseContextHeader = "X-Druid-Response-Context"

// nativeQuery serves POST /svc/v2/ (QUERY-SEMANTICS §1): the body is one
// native query; the answer is its JSON result array, indented with ?pretty.
func (s *Server) nativeQuery(w http.ResponseWriter, r *http.Request) {
	if s.opts.Broker.Closing() {
		// Certain not to have run: a router may resend it elsewhere.
		w.Header().Set(NotExecutedHeader, "true")
		writeError(w, http.StatusServiceUnavailable, "this broker is shutting down and did not run the query; send it to another broker")
		return
	}
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	id, out, rc, qerr := s.opts.Broker.QueryWithContext(r.Context(), body)
	w.Header().Set(queryIDHeader, id)
	if qerr != nil {
		if r.Context().Err() != nil {
			s.log.Debug("query ended with the client gone", "queryId", id, "error", qerr.Error())
		}
		eb := qerr.Body()
		if flag(r, "pretty") {
			eb = jacksonIndent(eb)
		}
		writeRawJSON(w, qerr.Status, eb)
		return
	}
	// Druid's response context: what the answer lacks (uncoveredIntervals
	// with uncoveredIntervalsLimit, missingSegments with
	// returnPartialResults), "{}" when nothing.
	w.Header().Set(responseContextHeader, rc.Header())
	if flag(r, "pretty") {
		out = jacksonIndent(out)
	}
	writeRawJSON(w, http.StatusOK, out)
}

// cancelQuery serves DELETE /svc/v2/{queryId}: 202 with no body, also for
// ids that are not running.
func (s *Server) cancelQuery(w http.ResponseWriter, r *http.Request) {
	s.opts.Broker.Cancel(mux.Vars(r)["queryId"])
	writeEmpty(w, http.StatusAccepted)
}

// writeQueryError answers a query failure with its §1.1 body and status.
func writeQueryError(w http.ResponseWriter, e *broker.Error) {
	writeRawJSON(w, e.Status, e.Body())
}

// jacksonIndent re-indents compact JSON the way Jackson's default pretty
// printer (Druid's ?pretty) does: objects one member per line indented by
// two spaces per object level with " : " after names, arrays on one line
// as "[ a, b ]", empty containers as "{ }" and "[ ]". The input must be
// valid JSON; whitespace outside strings is dropped.
func jacksonIndent(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(src)/4)
	var stack []byte // open containers: '{' or '['
	depth := 0       // object nesting (arrays do not indent)
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	nextNonSpace := func(i int) byte {
		for ; i < len(src); i++ {
			if c := src[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return c
			}
		}
		return 0
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, src[i:min(j+1, len(src))]...)
			i = j
		case '{':
			if nextNonSpace(i+1) == '}' {
				out = append(out, '{', ' ', '}')
				i = indexFrom(src, i+1, '}')
				continue
			}
			stack = append(stack, '{')
			depth++
			out = append(out, '{')
			newline()
		case '[':
			if nextNonSpace(i+1) == ']' {
				out = append(out, '[', ' ', ']')
				i = indexFrom(src, i+1, ']')
				continue
			}
			stack = append(stack, '[')
			out = append(out, '[', ' ')
		case '}':
			stack = stack[:max(len(stack)-1, 0)]
			depth--
			newline()
			out = append(out, '}')
		case ']':
			stack = stack[:max(len(stack)-1, 0)]
			out = append(out, ' ', ']')
		case ',':
			out = append(out, ',')
			if len(stack) > 0 && stack[len(stack)-1] == '{' {
				newline()
			} else {
				out = append(out, ' ')
			}
		case ':':
			out = append(out, ' ', ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

func indexFrom(b []byte, from int, c byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return len(b)
}
