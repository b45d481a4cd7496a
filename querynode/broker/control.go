package broker

import (
	"net/http"

	"strata/segmeta"
)

// ControlPlane returns the control nodes the broker reads from (those of
// its past timelines) and the client for them; nil when it has none. The SQL
// metadata tables read the cluster's segments, servers and tasks there.
func (b *Broker) ControlPlane() ([]string, *http.Client) {
	if h, ok := b.cfg.PastTimelines.(*HTTPPastTimelines); ok && len(h.URLs) > 0 {
		return h.URLs, h.Client
	}
	return nil, nil
}

// ServedRealtime is a realtime segment (rows a task has not published yet)
// and the server that announces it.
type ServedRealtime struct {
	Server  string // host:port
	Segment *segmeta.DataSegment
}

// RealtimeSegments lists the realtime segments the servers announce, every
// replica included: only the broker knows them (the control plane learns of
// a segment when it is published), so sys.segments reads them here.
func (b *Broker) RealtimeSegments() []ServedRealtime {
	v := b.view
	v.mu.RLock()
	defer v.mu.RUnlock()
	var out []ServedRealtime
	for _, s := range v.servers {
		for _, seg := range s.realtime {
			if !seg.IsTombstone() {
				out = append(out, ServedRealtime{Server: s.host, Segment: seg})
			}
		}
	}
	return out
}

// AccessError is the broker's answer to a refused authorization (403 with
// Druid's forbidden error, 401 without an identity), for callers outside the
// query path that check permissions themselves (the SQL metadata tables).
func AccessError(err error) *Error { return accessError(err) }
