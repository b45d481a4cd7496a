package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"strata/interval"
	"strata/javacompat"
)

// The broker's endpoints: native queries (spec 4.8, QUERY-SEMANTICS §1, in
// query.go), the broker datasource information endpoints (spec 4.9) and load
// status (spec 4.5).

// brokerLoadStatus serves GET /svc/broker/v1/loadstatus.
func (s *Server) brokerLoadStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"inventoryInitialized": s.opts.Broker.Ready()})
}

// brokerReadiness serves GET /svc/broker/v1/readiness.
func (s *Server) brokerReadiness(w http.ResponseWriter, r *http.Request) {
	writeEmpty(w, readiness(s.opts.Broker.Ready()))
}

func readiness(ok bool) int {
	if ok {
		return http.StatusOK
	}
	return http.StatusServiceUnavailable
}

// queryCandidates serves POST /svc/v2/candidates.
func (s *Server) queryCandidates(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	num, ok := numCandidates(w, r)
	if !ok {
		return
	}
	cands, qerr := s.opts.Broker.QueryCandidates(r.Context(), body, num)
	if qerr != nil {
		writeQueryError(w, qerr)
		return
	}
	out, err := jsonMarshalPlain(cands)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot encode candidates")
		return
	}
	if flag(r, "pretty") {
		out = jacksonIndent(out)
	}
	writeRawJSON(w, http.StatusOK, out)
}

// dataSourceCandidates serves GET /svc/v2/datasources/{dataSourceName}/candidates.
func (s *Server) dataSourceCandidates(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("intervals")
	if strings.TrimSpace(raw) == "" {
		writeError(w, http.StatusBadRequest, "query parameter intervals is required: comma-separated ISO-8601 intervals")
		return
	}
	var ivs []interval.Interval
	for _, part := range strings.Split(raw, ",") {
		iv, err := interval.Parse(strings.TrimSpace(part))
		if err != nil {
			writeError(w, http.StatusBadRequest, "intervals: "+err.Error())
			return
		}
		ivs = append(ivs, iv)
	}
	num, ok := numCandidates(w, r)
	if !ok {
		return
	}
	writeJSONPlain(w, http.StatusOK, s.opts.Broker.Candidates([]string{mux.Vars(r)["dataSourceName"]}, ivs, num))
}

func numCandidates(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.URL.Query().Get("numCandidates")
	if v == "" {
		return -1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, "numCandidates must be an integer, got "+strconv.Quote(v))
		return 0, false
	}
	return n, true
}

// brokerDataSources serves GET /svc/v2/datasources.
func (s *Server) brokerDataSources(w http.ResponseWriter, r *http.Request) {
	names, _ := readableOnly[any](r, s.opts.Broker.DataSources(), nil)
	writeJSONPlain(w, http.StatusOK, nonNil(names))
}

// intervalParam reads the optional `interval` parameter ('/' or '_').
func intervalParam(w http.ResponseWriter, r *http.Request) (*interval.Interval, bool) {
	v := r.URL.Query().Get("interval")
	if v == "" {
		return nil, true
	}
	iv, err := interval.ParsePath(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, "interval: "+err.Error())
		return nil, false
	}
	return &iv, true
}

// brokerDataSource serves GET /svc/v2/datasources/{dataSourceName}: its dimensions and
// metrics, or with `full` the same per served interval.
func (s *Server) brokerDataSource(w http.ResponseWriter, r *http.Request) {
	iv, ok := intervalParam(w, r)
	if !ok {
		return
	}
	ds := mux.Vars(r)["dataSourceName"]
	if !flag(r, "full") {
		writeJSONPlain(w, http.StatusOK, s.opts.Broker.DataSourceColumns(ds, iv))
		return
	}
	b := []byte{'{'}
	for i, ic := range s.opts.Broker.DataSourceColumnsByInterval(ds, iv) {
		if i > 0 {
			b = append(b, ',')
		}
		b = javacompat.AppendJSONString(b, ic.Interval.String())
		b = append(b, ':')
		cols, err := jsonMarshalPlain(ic.Columns)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "cannot encode columns")
			return
		}
		b = append(b, cols...)
	}
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

// brokerColumns serves the deprecated /dimensions and /metrics endpoints.
func (s *Server) brokerColumns(dims bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		iv, ok := intervalParam(w, r)
		if !ok {
			return
		}
		c := s.opts.Broker.DataSourceColumns(mux.Vars(r)["dataSourceName"], iv)
		if dims {
			writeJSONPlain(w, http.StatusOK, c.Dimensions)
		} else {
			writeJSONPlain(w, http.StatusOK, c.Metrics)
		}
	}
}
