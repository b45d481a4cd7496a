package server

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"strata/auth"
	"strata/querynode/broker"
	"strata/querynode/sqlplan"
)

// sqlQueryIDHeader carries a SQL query's id in the answer (Druid's).
const sqlQueryIDHeader = "X-Druid-SQL-Query-Id"

// sqlHeaderIncludedHeader says the answer starts with a header row (Druid's
// SqlResource sets it when the request asked for "header": true); clients
// such as Cube's Druid driver drop the first row only when it is there.
const sqlHeaderIncludedHeader = "X-Druid-SQL-Header-Included"

// sqlRequest is the body of POST /druid/v2/sql (Druid's SQL API).
type sqlRequest struct {
	Query          string          `json:"query"`
	ResultFormat   string          `json:"resultFormat"`
	Header         bool            `json:"header"`
	TypesHeader    bool            `json:"typesHeader"`
	SQLTypesHeader bool            `json:"sqlTypesHeader"`
	Context        map[string]any  `json:"context"`
	Parameters     []sqlplan.Param `json:"parameters"`
}

// The result formats and their content types.
var sqlFormats = map[string]string{
	"object":      "application/json",
	"array":       "application/json",
	"objectLines": "text/plain",
	"arrayLines":  "text/plain",
	"csv":         "text/csv",
}

// runningSQL is the SQL queries running on each server by sqlQueryId, for
// DELETE /druid/v2/sql/{sqlQueryId}.
var runningSQL sync.Map // sqlKey → *runningSQLQuery

// runningSQLQuery is one running SQL query: how to cancel it, and what a
// canceller must be allowed (Druid: WRITE on every datasource it reads).
type runningSQLQuery struct {
	cancel context.CancelCauseFunc
	owner  *auth.Identity // the submitter (nil with security off)

	mu      sync.Mutex
	tables  []string // the datasources it reads, once planned
	planned bool
}

func (q *runningSQLQuery) setTables(tables []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tables, q.planned = append([]string{}, tables...), true
}

// datasources returns what the query reads and whether planning has said.
func (q *runningSQLQuery) datasources() ([]string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tables, q.planned
}

// runningSQLDataSources is what the running SQL query {queryId} reads: the
// route's access declaration needs WRITE on each. nil when it is not running
// here (the handler's 404) or still being planned (the handler then lets
// only its submitter cancel it).
func runningSQLDataSources(s *Server, r *http.Request) []string {
	v, ok := runningSQL.Load(sqlKey{s, mux.Vars(r)["queryId"]})
	if !ok {
		return nil
	}
	tables, _ := v.(*runningSQLQuery).datasources()
	if len(tables) == 0 {
		return nil
	}
	return tables
}

type sqlKey struct {
	s  *Server
	id string
}

var errSQLCancelled = errors.New("SQL query cancelled")

// sqlError answers a SQL failure in Druid's error JSON.
func sqlError(w http.ResponseWriter, category, msg string) {
	code := "invalidInput"
	switch category {
	case sqlplan.CategoryUnsupported:
		code = "unsupported"
	case sqlplan.CategoryCapacityExceeded:
		code = "resourceLimitExceeded"
	}
	e := &broker.Error{Status: http.StatusBadRequest, Code: "druidException", ErrorCode: code, Persona: "USER", Category: category, Message: msg}
	writeRawJSON(w, e.Status, e.Body())
}

// sqlQuery serves POST /svc/v2/sql: the statement is planned onto one
// native query, which runs through the broker's ordinary path.
func (s *Server) sqlQuery(w http.ResponseWriter, r *http.Request) {
	var req sqlRequest
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json", "text/plain":
	default:
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content type %q: send application/json or text/plain", r.Header.Get("Content-Type")))
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if mt == "text/plain" {
		req.Query = string(body)
	} else if err := json.Unmarshal(body, &req); err != nil {
		sqlError(w, sqlplan.CategoryInvalidInput, "Malformed SQL request: "+err.Error())
		return
	}
	if req.ResultFormat == "" {
		req.ResultFormat = "object"
	}
	ctype, known := sqlFormats[req.ResultFormat]
	if !known {
		sqlError(w, sqlplan.CategoryInvalidInput, "Unsupported resultFormat ["+req.ResultFormat+"]: use object, array, objectLines, arrayLines or csv")
		return
	}
	if req.Query == "" {
		sqlError(w, sqlplan.CategoryInvalidInput, "Query must not be empty")
		return
	}
	qctx := map[string]any{}
	for k, v := range req.Context {
		qctx[k] = v
	}
	id, _ := qctx["sqlQueryId"].(string)
	generatedID := ""
	if id == "" {
		id = broker.NewUUID()
		qctx["sqlQueryId"] = id
		generatedID = id
	}
	w.Header().Set(sqlQueryIDHeader, id)

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	key := sqlKey{s, id}
	running := &runningSQLQuery{cancel: cancel, owner: auth.IdentityFrom(r.Context())}
	if _, dup := runningSQL.LoadOrStore(key, running); dup {
		sqlError(w, sqlplan.CategoryInvalidInput, "A SQL query with sqlQueryId ["+id+"] is already running")
		return
	}
	defer runningSQL.Delete(key)

	// IN (subquery) runs its subquery on the same native path first.
	run := func(ctx context.Context, native []byte) ([]byte, error) {
		_, out, _, qerr := s.opts.Broker.QueryWithContext(ctx, native)
		if qerr != nil {
			return nil, qerr
		}
		return out, nil
	}
	planned, err := s.sqlPlan(ctx, req, qctx, generatedID, run)
	if err != nil {
		var pe *sqlplan.Error
		var qe *broker.Error
		switch {
		case errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrUnauthenticated):
			writeAuthError(w, err)
		case errors.As(err, &pe):
			sqlError(w, pe.Category, pe.Msg)
		case errors.As(err, &qe):
			writeRawJSON(w, qe.Status, qe.Body())
		default:
			s.log.Error("planning a SQL query failed", "sqlQueryId", id, "error", err)
			writeRawJSON(w, http.StatusInternalServerError, broker.Legacy(broker.CodeUnknown, s.opts.Broker.Name(), "%s", err.Error()).Body())
		}
		return
	}
	running.setTables(planned.Resources)
	var cols []sqlplan.Column
	var rows [][]any
	if planned.Explain {
		row, err := planned.ExplainRow()
		if err != nil {
			writeRawJSON(w, http.StatusInternalServerError, broker.Legacy(broker.CodeUnknown, s.opts.Broker.Name(), "%s", err.Error()).Body())
			return
		}
		cols = []sqlplan.Column{{Name: "PLAN", Type: "VARCHAR"}, {Name: "RESOURCES", Type: "VARCHAR"}, {Name: "ATTRIBUTES", Type: "VARCHAR"}}
		rows = [][]any{row}
	} else {
		// One native query, or one per branch of a top-level UNION ALL, run
		// in order, their rows concatenated.
		for i, native := range planned.Natives {
			var out []byte
			var qerr *broker.Error
			if planned.parsed != nil {
				_, out, _, qerr = s.opts.Broker.QueryParsed(ctx, planned.parsed[i], native)
			} else {
				_, out, _, qerr = s.opts.Broker.QueryWithContext(ctx, native)
			}
			if qerr != nil {
				if context.Cause(ctx) == errSQLCancelled {
					s.log.Debug("SQL query cancelled", "sqlQueryId", id)
				}
				writeRawJSON(w, qerr.Status, qerr.Body())
				return
			}
			part, err := planned.RowsOf(i, out)
			var pe *sqlplan.Error
			if errors.As(err, &pe) {
				sqlError(w, pe.Category, pe.Msg) // a limit the query went over
				return
			}
			if err != nil {
				s.log.Error("reading a native answer as SQL rows failed", "sqlQueryId", id, "error", err)
				writeRawJSON(w, http.StatusInternalServerError, broker.Legacy(broker.CodeUnknown, s.opts.Broker.Name(), "%s", err.Error()).Body())
				return
			}
			rows = append(rows, part...)
		}
		rows = planned.CapRows(rows) // sqlOuterLimit over a UNION ALL's parts
		cols = planned.Columns
	}
	w.Header().Set("Content-Type", ctype)
	if req.Header {
		w.Header().Set(sqlHeaderIncludedHeader, "yes")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(renderSQL(req, cols, rows))
}

// cancelSQL serves DELETE /svc/v2/sql/{queryId} (the sqlQueryId): 202 when the query was
// running here, 404 when it is not known.
func (s *Server) cancelSQL(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["queryId"]
	v, ok := runningSQL.Load(sqlKey{s, id})
	if !ok {
		writeError(w, http.StatusNotFound, "SQL query ["+id+"] is not running")
		return
	}
	q := v.(*runningSQLQuery)
	// The route's declaration checked WRITE on what the query reads. Before
	// planning has named that, only the submitter may cancel it.
	if tables, planned := q.datasources(); (!planned || len(tables) == 0) && auth.Enabled(r.Context()) {
		if me := auth.IdentityFrom(r.Context()); me == nil || q.owner == nil || (me.Name != q.owner.Name && !me.Internal) {
			writeSecurityError(w, http.StatusForbidden, "forbidden", "FORBIDDEN", "Unauthorized: only its submitter may cancel a SQL query that reads no datasource or is still being planned")
			return
		}
	}
	q.cancel(errSQLCancelled)
	writeEmpty(w, http.StatusAccepted)
}

// renderSQL writes rows in the request's result format, with the header
// rows it asks for (names; native types; SQL types).
func renderSQL(req sqlRequest, cols []sqlplan.Column, rows [][]any) []byte {
	var b bytes.Buffer
	names := make([]string, len(cols))
	types := make([]string, len(cols))
	sqlTypes := make([]string, len(cols))
	for i, c := range cols {
		names[i], types[i], sqlTypes[i] = c.Name, druidType(c.Type), sqlTypeName(c.Type)
	}
	switch req.ResultFormat {
	case "csv":
		cw := csv.NewWriter(&b)
		if req.Header {
			cw.Write(names)
			if req.TypesHeader {
				cw.Write(types)
			}
			if req.SQLTypesHeader {
				cw.Write(sqlTypes)
			}
		}
		rec := make([]string, len(cols))
		for _, row := range rows {
			for i, v := range row {
				rec[i] = csvValue(v)
			}
			cw.Write(rec)
		}
		cw.Flush()
		b.WriteByte('\n')
	case "array", "arrayLines":
		var lines [][]byte
		if req.Header {
			lines = append(lines, mustJSON(names))
			if req.TypesHeader {
				lines = append(lines, mustJSON(types))
			}
			if req.SQLTypesHeader {
				lines = append(lines, mustJSON(sqlTypes))
			}
		}
		for _, row := range rows {
			line, ok := appendJSONRow(make([]byte, 0, 64), jsonRow(row))
			if !ok {
				line = []byte("null") // as mustJSON
			}
			lines = append(lines, line)
		}
		writeLines(&b, lines, req.ResultFormat == "arrayLines")
	default: // object, objectLines
		var lines [][]byte
		if req.Header {
			h := orderedObject{}
			for i, n := range names {
				var v any
				if req.TypesHeader || req.SQLTypesHeader {
					t := orderedObject{}
					if req.TypesHeader {
						t = append(t, kv{"type", types[i]})
					}
					if req.SQLTypesHeader {
						t = append(t, kv{"sqlType", sqlTypes[i]})
					}
					v = t
				}
				h = append(h, kv{n, v})
			}
			lines = append(lines, mustJSON(h))
		}
		keys := jsonKeys(names)
		for _, row := range rows {
			line, ok := appendJSONObjectRow(make([]byte, 0, 128), keys, jsonRow(row))
			if !ok {
				line = []byte("null") // as mustJSON
			}
			lines = append(lines, line)
		}
		writeLines(&b, lines, req.ResultFormat == "objectLines")
	}
	return b.Bytes()
}

// writeLines writes a JSON array, or one value per line followed by a
// blank line (Druid's end-of-results marker for the line formats).
func writeLines(b *bytes.Buffer, lines [][]byte, asLines bool) {
	if asLines {
		for _, l := range lines {
			b.Write(l)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		return
	}
	b.WriteByte('[')
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(l)
	}
	b.WriteByte(']')
}

// druidType is the native type a SQL type's values have (typesHeader).
func druidType(sqlType string) string {
	if elem, ok := strings.CutSuffix(sqlType, " ARRAY"); ok {
		// An SQL array ("BIGINT ARRAY") is an expression array.
		switch elem {
		case "BIGINT", "TIMESTAMP", "BOOLEAN":
			return "ARRAY<LONG>"
		case "DOUBLE", "FLOAT":
			return "ARRAY<DOUBLE>"
		}
		return "ARRAY<STRING>"
	}
	switch sqlType {
	case "TIMESTAMP", "BIGINT", "BOOLEAN":
		return "LONG"
	case "DOUBLE":
		return "DOUBLE"
	case "FLOAT":
		return "FLOAT"
	case "VARCHAR":
		return "STRING"
	}
	if strings.HasPrefix(sqlType, "COMPLEX<") {
		return sqlType // a sketch's native type is its complex type
	}
	return "COMPLEX"
}

// jsonRow makes values JSON can carry: NaN and infinities as Druid writes
// them (strings).
func jsonRow(row []any) []any {
	for i, v := range row {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			row[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return row
}

func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return string(mustJSON(v))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// orderedObject is a JSON object whose members keep their order (result
// columns in select-list order).
type orderedObject []kv

type kv struct {
	k string
	v any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
