package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"strata/protocol"
	"strata/querynode/broker"
)

// historicalLoadStatus serves GET /svc/historical/v1/loadstatus (spec 4.5).
func (s *Server) historicalLoadStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"cacheInitialized": s.opts.Historical.Ready()})
}

// historicalReadiness serves GET /svc/historical/v1/readiness.
func (s *Server) historicalReadiness(w http.ResponseWriter, r *http.Request) {
	writeEmpty(w, readiness(s.opts.Historical.Ready()))
}

// announce serves a data server's segment announcement to brokers
// (protocol.AnnouncePath).
func (s *Server) announce(w http.ResponseWriter, r *http.Request) {
	writeJSONPlain(w, http.StatusOK, s.opts.Historical.Announce(r.URL.Query().Get("since")))
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
	var sq protocol.SubQuery
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
		w.Header().Set(protocol.FinalHeader, "true")
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
