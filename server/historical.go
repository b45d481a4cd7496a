package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"

	"strata/broker"
	"strata/historical"
)

// historicalRoutes mounts the historical's endpoints: load status (spec
// 4.5) and the internal endpoints brokers use: its segment announcement and
// sub-queries over named segments.
func (s *Server) historicalRoutes(r *mux.Router) {
	h := s.opts.Historical
	if h == nil {
		s.log.Error("historical role without a historical node: its endpoints are not served")
		return
	}
	r.HandleFunc("/svc/historical/v1/loadstatus", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]bool{"cacheInitialized": h.Ready()})
	}).Methods(http.MethodGet)
	r.HandleFunc("/svc/historical/v1/readiness", func(w http.ResponseWriter, r *http.Request) {
		writeEmpty(w, readiness(h.Ready()))
	}).Methods(http.MethodGet)
	s.dataServerRoutes(r)
}

// dataServerRoutes mounts what brokers use of any data server (a historical,
// or a middle manager serving its tasks' rows): the segment announcement and
// sub-queries over named segments.
func (s *Server) dataServerRoutes(r *mux.Router) {
	h := s.opts.Historical
	r.HandleFunc(historical.AnnouncePath, func(w http.ResponseWriter, r *http.Request) {
		writeJSONPlain(w, http.StatusOK, h.Announce(r.URL.Query().Get("since")))
	}).Methods(http.MethodGet)
	r.HandleFunc(historical.QueryPath, s.subQuery).Methods(http.MethodPost)
}

// subQuery serves POST /svc-internal/v1/query: a broker's sub-query over
// named segments, answered with the merged partial result (or an error in
// the §1.1 shape, which the broker passes on to its client).
func (s *Server) subQuery(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readJSONBody(w, r)
	if !ok {
		return
	}
	h := s.opts.Historical
	var sq historical.SubQuery
	if err := json.Unmarshal(body, &sq); err != nil {
		writeQueryError(w, broker.InvalidInput("cannot read sub-query: %v", err))
		return
	}
	res, err := h.Query(r.Context(), &sq)
	if err != nil {
		writeQueryError(w, broker.ErrorFrom(err, h.Name()))
		return
	}
	if res.Final != nil {
		w.Header().Set(historical.FinalHeader, "true")
		writeRawJSON(w, http.StatusOK, res.Final)
		return
	}
	out, err := json.Marshal(res)
	if err != nil {
		writeQueryError(w, broker.Legacy(broker.CodeUnknown, h.Name(), "cannot encode the partial result: %v", err))
		return
	}
	writeRawJSON(w, http.StatusOK, out)
}

// jsonMarshalPlain marshals v without HTML escaping (Jackson does not
// escape <, > and &).
func jsonMarshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
