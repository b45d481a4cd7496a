package broker

import "net/http"

// ControlPlane returns the control nodes the broker reads from (those of
// its past timelines) and the client for them; nil when it has none. The SQL
// metadata tables read the cluster's segments, servers and tasks there.
func (b *Broker) ControlPlane() ([]string, *http.Client) {
	if h, ok := b.cfg.PastTimelines.(*HTTPPastTimelines); ok && len(h.URLs) > 0 {
		return h.URLs, h.Client
	}
	return nil, nil
}
