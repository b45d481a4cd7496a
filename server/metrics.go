package server

import (
	"fmt"
	"net/http"

	"strata/metrics"
)

// setupMetrics makes the process's registry (unless Options gives one) and
// adds what this process's roles report: the Raft gauges of a control node,
// the segment and task families of a coordinator and an overlord
// (metrics_state.go), the query families of a broker and a data server.
func (s *Server) setupMetrics() error {
	s.metrics = s.opts.Metrics
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	if s.node != nil {
		if err := s.metrics.Register(metrics.RaftCollectors(s.node)...); err != nil {
			return fmt.Errorf("raft metrics: %w", err)
		}
	}
	if s.roles[RoleCoordinator] {
		if err := s.metrics.Register(segmentCollector{s}, queueCollector{s}); err != nil {
			return fmt.Errorf("segment metrics: %w", err)
		}
	}
	if s.roles[RoleOverlord] {
		if err := s.metrics.Register(taskCollector{s}); err != nil {
			return fmt.Errorf("task metrics: %w", err)
		}
		if s.opts.Supervisors != nil {
			if err := s.metrics.Register(lagCollector{s.opts.Supervisors}); err != nil {
				return fmt.Errorf("lag metrics: %w", err)
			}
		}
	}
	// svc.metrics.queryPath=false (a cost measurement) leaves the query
	// families empty.
	if s.opts.Broker != nil && s.settings.QueryPathMetrics {
		s.opts.Broker.SetMetrics(s.metrics.Queries)
	}
	if s.opts.Historical != nil && s.settings.QueryPathMetrics {
		s.opts.Historical.SetMetrics(s.metrics.Queries)
	}
	return nil
}

// Metrics is the process's registry: what the process runs beside the
// server (a middle manager's worker) records there too.
func (s *Server) Metrics() *metrics.Registry { return s.metrics }

// serveMetrics serves GET /metrics: the exposition of the process's
// registry, in the format the scraper asks for (text by default).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.Handler().ServeHTTP(w, r)
}

// instrument counts the requests of the route with the given pattern (a
// Server built without New, in tests, has no registry and counts nothing;
// nor does one with svc.metrics.queryPath=false).
func (s *Server) instrument(route string, h http.HandlerFunc) http.HandlerFunc {
	if s.metrics == nil || !s.settings.QueryPathMetrics {
		return h
	}
	return s.metrics.HTTP.Instrument(route, h)
}
