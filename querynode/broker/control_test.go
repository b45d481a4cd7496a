package broker

import "testing"

// RealtimeSegments lists what each server announces as realtime, replicas
// included, with the server's host.
func TestRealtimeSegmentsListsEveryReplica(t *testing.T) {
	b := &Broker{view: newView([]string{"http://a:1", "http://b:2"})}
	a, bs := b.view.servers[0], b.view.servers[1]
	const seq = "index_kafka_ds_g0_0123456789abcdef"
	ra := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_0_aaaa", 0, 0)
	rb := seg(t, "ds", "2020-01-01T00/2020-01-01T01", "realtime-"+seq+"_1_bbbb", 0, 0)
	b.view.apply(a, rtAnn("a1", map[string]string{ra.Version: seq}, nil, ra), nil)
	b.view.apply(bs, rtAnn("b1", map[string]string{rb.Version: seq}, nil, rb), nil)
	got := b.RealtimeSegments()
	if len(got) != 2 || got[0].Server != "a:1" || got[0].Segment != ra || got[1].Server != "b:2" || got[1].Segment != rb {
		t.Fatalf("realtime segments %+v", got)
	}
	b.view.apply(a, rtAnn("a2", nil, nil), nil)
	if got := b.RealtimeSegments(); len(got) != 1 || got[0].Segment != rb {
		t.Fatalf("after a stopped announcing: %+v", got)
	}
}
