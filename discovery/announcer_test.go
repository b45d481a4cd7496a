package discovery

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLeader answers announcements like a leader whose clock is off by skew
// and whose version is version; a follower in front of it redirects.
func fakeLeader(t *testing.T, skew time.Duration, version string, got *atomic.Pointer[Announcement]) (leader, follower *httptest.Server) {
	leader = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != AnnouncePath {
			http.NotFound(w, r)
			return
		}
		var a Announcement
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
			t.Errorf("announcement: %v", err)
		}
		got.Store(&a)
		json.NewEncoder(w).Encode(Reply{Leader: "http://" + r.Host, TimeMs: time.Now().Add(skew).UnixMilli(), Version: version,
			Members: []Member{
				{Announcement: Announcement{ID: "b:1", Roles: []string{"broker"}, URL: "http://b:1"}, State: StateLive},
				{Announcement: Announcement{ID: "b:2", Roles: []string{"broker", "router"}, URL: "http://b:2/"}, State: StateUnconfirmed},
				{Announcement: Announcement{ID: "b:3", Roles: []string{"broker"}, URL: "http://b:3"}, State: StateGone},
				{Announcement: Announcement{ID: "h:1", Roles: []string{"historical"}, URL: "http://h:1"}, State: StateLive},
			}})
	}))
	follower = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, leader.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(leader.Close)
	t.Cleanup(follower.Close)
	return leader, follower
}

// An announcer reaches the leader through a dead control node and a
// follower's redirect, lists the live members of a role, and reports a
// clock or version that disagrees with the leader's.
func TestAnnouncerFollowsLeaderAndReportsDisagreement(t *testing.T) {
	var got atomic.Pointer[Announcement]
	leader, follower := fakeLeader(t, 10*time.Second, "9.9.9", &got)
	a, err := NewAnnouncer(AnnouncerConfig{
		Coordinators: []string{"http://127.0.0.1:1", follower.URL},
		Self:         Announcement{ID: "me:1", Roles: []string{"historical"}, URL: "http://me:1", Version: "1.0.0", StartTimeMs: 42},
		MaxClockSkew: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !a.AnnounceOnce(context.Background()) {
		t.Fatalf("no leader reached: %+v", a.Status())
	}
	if a.Leader() != leader.URL {
		t.Fatalf("leader %q, want %q", a.Leader(), leader.URL)
	}
	if g := got.Load(); g == nil || g.ID != "me:1" || g.StartTimeMs != 42 || g.SentMs == 0 {
		t.Fatalf("the leader got %+v", g)
	}
	if b := a.URLs("broker"); !slices.Equal(b, []string{"http://b:1", "http://b:2"}) {
		t.Fatalf("live brokers %v", b)
	}
	st := a.Status()
	if len(st.Warnings) != 2 || !strings.Contains(st.Warnings[0], "clock differs") || !strings.Contains(st.Warnings[1], "version 1.0.0") ||
		st.ClockSkewMs < 9000 || st.ClockSkewMs > 11000 {
		t.Fatalf("status %+v", st)
	}

	// Agreeing clocks and versions: no warning.
	leader2, _ := fakeLeader(t, 0, "1.0.0", &got)
	a2, _ := NewAnnouncer(AnnouncerConfig{Coordinators: []string{leader2.URL},
		Self: Announcement{ID: "me:1", Roles: []string{"historical"}, URL: "http://me:1", Version: "1.0.0"}})
	if !a2.AnnounceOnce(context.Background()) || len(a2.Status().Warnings) != 0 {
		t.Fatalf("status %+v", a2.Status())
	}

	// No control node answers: the last membership stays, the error shows.
	leader2.Close()
	if a2.AnnounceOnce(context.Background()) {
		t.Fatal("announced to a closed server")
	}
	if st := a2.Status(); st.LastError == "" || st.Leader != "" || len(a2.URLs("historical")) != 1 {
		t.Fatalf("after losing the control plane: %+v %v", st, a2.URLs("historical"))
	}
}

func TestAnnouncerRefusesBadConfig(t *testing.T) {
	if _, err := NewAnnouncer(AnnouncerConfig{Self: Announcement{ID: "x", Roles: []string{"broker"}, URL: "http://x"}}); err == nil {
		t.Fatal("no coordinators accepted")
	}
	if _, err := NewAnnouncer(AnnouncerConfig{Coordinators: []string{"http://c"}, Self: Announcement{ID: "x", URL: "http://x"}}); err == nil {
		t.Fatal("no roles accepted")
	}
}
