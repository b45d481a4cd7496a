package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// AnnouncerConfig configures a process's side.
type AnnouncerConfig struct {
	// Coordinators are the control nodes' base URLs (svc.discovery.coordinators).
	// A host name that resolves to several addresses stands for each of them.
	Coordinators []string
	Self         Announcement
	Period       time.Duration // heartbeat (svc.discovery.heartbeatPeriod)
	// MaxClockSkew: a clock further than this from the leader's is reported
	// in /status (svc.discovery.maxClockSkew).
	MaxClockSkew time.Duration
	Client       *http.Client // internal credentials; redirects are not followed
	Logger       hclog.Logger
}

// Announcer announces its process to the leader every period and keeps the
// membership of the last reply.
type Announcer struct {
	cfg    AnnouncerConfig
	client *http.Client
	log    hclog.Logger

	mu        sync.Mutex
	reply     Reply     // the last one received
	replyAt   time.Time // when
	leader    string    // whom to try first
	lastErr   string
	skew      time.Duration // leader's clock minus ours
	skewKnown bool

	refreshMu sync.Mutex // one Refresh announcement at a time

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewAnnouncer validates cfg.
func NewAnnouncer(cfg AnnouncerConfig) (*Announcer, error) {
	if len(cfg.Coordinators) == 0 {
		return nil, fmt.Errorf("discovery: no control node address (svc.discovery.coordinators)")
	}
	if err := validate(cfg.Self); err != nil {
		return nil, fmt.Errorf("discovery: this process's announcement: %w", err)
	}
	if cfg.Period <= 0 {
		cfg.Period = time.Second
	}
	if cfg.MaxClockSkew <= 0 {
		cfg.MaxClockSkew = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	base := cfg.Client
	if base == nil {
		base = &http.Client{}
	}
	c := *base
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Timeout == 0 || c.Timeout > 5*time.Second {
		c.Timeout = 5 * time.Second
	}
	return &Announcer{cfg: cfg, client: &c, log: cfg.Logger, stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Start announces now and then every period until Close.
func (a *Announcer) Start() {
	// Close cancels an announcement in flight: a control plane that does
	// not answer must not hold up the process's stop.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-a.stop
		cancel()
	}()
	go func() {
		defer close(a.done)
		for {
			a.AnnounceOnce(ctx)
			select {
			case <-a.stop:
				return
			case <-time.After(a.cfg.Period):
			}
		}
	}()
}

// Close stops announcing and tells the leader this process leaves, so it is
// gone at once instead of after the lease timeout.
func (a *Announcer) Close() {
	a.once.Do(func() {
		close(a.stop)
		<-a.done
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		body, _ := json.Marshal(LeaveRequest{ID: a.cfg.Self.ID})
		for _, base := range a.candidates(ctx) {
			if code, _, err := a.post(ctx, base+LeavePath, body); err == nil && code == http.StatusOK {
				return
			}
		}
	})
}

// candidates lists the bases to try: the last leader, then every control
// node (each address of a name that resolves to several).
func (a *Announcer) candidates(ctx context.Context) []string {
	a.mu.Lock()
	leader := a.leader
	a.mu.Unlock()
	var out []string
	if leader != "" {
		out = append(out, leader)
	}
	for _, c := range a.cfg.Coordinators {
		for _, u := range expand(ctx, c) {
			if !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// expand turns a URL whose host is a name into one URL per address it
// resolves to (DNS round-robin in front of the control nodes); an address,
// or a name that does not resolve, is kept as written.
func expand(ctx context.Context, base string) []string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return []string{base}
	}
	host, port := u.Hostname(), u.Port()
	if net.ParseIP(host) != nil || host == "localhost" {
		return []string{base}
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(rctx, host)
	if err != nil || len(addrs) < 2 {
		return []string{base}
	}
	slices.Sort(addrs)
	out := make([]string, 0, len(addrs))
	for _, ip := range addrs {
		v := *u
		v.Host = net.JoinHostPort(ip, port)
		if port == "" {
			v.Host = ip
			if strings.Contains(ip, ":") {
				v.Host = "[" + ip + "]"
			}
		}
		out = append(out, v.String())
	}
	return out
}

func (a *Announcer) post(ctx context.Context, u string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode == http.StatusTemporaryRedirect {
		return resp.StatusCode, []byte(resp.Header.Get("Location")), err
	}
	return resp.StatusCode, b, err
}

// AnnounceOnce announces this process to the leader, trying the last
// leader first, then each control node, following one redirect to the
// leader. It reports whether a leader answered.
func (a *Announcer) AnnounceOnce(ctx context.Context) bool {
	tried := map[string]bool{}
	var errs []string
	a.mu.Lock()
	var queue []string
	if a.leader != "" {
		queue = append(queue, a.leader)
	}
	a.mu.Unlock()
	expanded := false
	for len(queue) > 0 || !expanded {
		if len(queue) == 0 {
			// The last leader did not answer: every control node, names
			// resolved now (a DNS name may stand for several).
			queue, expanded = a.candidates(ctx), true
			continue
		}
		base := strings.TrimRight(queue[0], "/")
		queue = queue[1:]
		if tried[base] {
			continue
		}
		tried[base] = true
		self := a.cfg.Self
		t0 := time.Now()
		self.SentMs = t0.UnixMilli()
		body, _ := json.Marshal(self)
		code, b, err := a.post(ctx, base+AnnouncePath, body)
		t1 := time.Now()
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case code == http.StatusTemporaryRedirect:
			if lu, perr := url.Parse(string(b)); perr == nil && lu.Host != "" {
				queue = append([]string{lu.Scheme + "://" + lu.Host}, queue...)
			}
		case code != http.StatusOK:
			errs = append(errs, fmt.Sprintf("%s answered %d: %s", base, code, strings.TrimSpace(string(b))))
		default:
			var r Reply
			if err := json.Unmarshal(b, &r); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", base, err))
				continue
			}
			mid := t0.Add(t1.Sub(t0) / 2)
			a.mu.Lock()
			first := a.replyAt.IsZero()
			if a.lastErr != "" {
				a.log.Info("control plane reachable again", "leader", base)
			}
			a.reply, a.replyAt, a.leader, a.lastErr = r, t1, base, ""
			a.skew, a.skewKnown = time.UnixMilli(r.TimeMs).Sub(mid), true
			a.mu.Unlock()
			if first {
				a.log.Info("announced to the control plane", "leader", base, "members", len(r.Members))
			}
			if w := a.warnings(); len(w) > 0 && first {
				for _, m := range w {
					a.log.Warn(m)
				}
			}
			return true
		}
	}
	if ctx.Err() != nil {
		return false // closing
	}
	msg := "no control node answered: " + strings.Join(errs, "; ")
	a.mu.Lock()
	if msg != a.lastErr && a.lastErr == "" {
		a.log.Warn("cannot announce to the control plane", "error", msg)
	}
	a.lastErr = msg
	a.leader = ""
	a.mu.Unlock()
	return false
}

// Refresh announces now, outside the heartbeat, unless a reply arrived
// after the given time: a caller that found the membership stale (a router
// whose brokers all refused) gets the leader's current one. Concurrent
// callers share one announcement.
func (a *Announcer) Refresh(ctx context.Context, after time.Time) {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	a.mu.Lock()
	fresh := a.replyAt.After(after)
	a.mu.Unlock()
	if !fresh {
		a.AnnounceOnce(ctx)
	}
}

// URLs lists the base URLs of the live members with role, sorted; from the
// last reply, so a control plane that is briefly unreachable leaves the
// list as it was.
func (a *Announcer) URLs(role string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, m := range a.reply.Members {
		if m.State != StateGone && m.HasRole(role) && m.ID != "" {
			out = append(out, strings.TrimRight(m.URL, "/"))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Leader is the URL of the leader that answered last ("" when none did).
func (a *Announcer) Leader() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.leader
}

// Members is the last reply's membership.
func (a *Announcer) Members() []Member {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reply.Members)
}

// Coordinators are the configured control nodes.
func (a *Announcer) Coordinators() []string { return slices.Clone(a.cfg.Coordinators) }

// Status is what /status shows about discovery.
type Status struct {
	ID            string   `json:"id"`
	Coordinators  []string `json:"coordinators"`
	Leader        string   `json:"leader,omitempty"`
	LeaderVersion string   `json:"leaderVersion,omitempty"`
	LastContactMs int64    `json:"lastContactMs,omitempty"` // ms since the leader last answered
	ClockSkewMs   int64    `json:"clockSkewMs"`             // the leader's clock minus this process's
	Members       int      `json:"members"`
	LastError     string   `json:"lastError,omitempty"`
	// Warnings: this process's clock or version disagrees with the leader's.
	Warnings []string `json:"warnings"`
}

// Status reports the announcer's state.
func (a *Announcer) Status() Status {
	w := a.warnings()
	a.mu.Lock()
	defer a.mu.Unlock()
	st := Status{ID: a.cfg.Self.ID, Coordinators: a.cfg.Coordinators, Leader: a.leader, LeaderVersion: a.reply.Version,
		ClockSkewMs: a.skew.Milliseconds(), Members: len(a.reply.Members), LastError: a.lastErr, Warnings: w}
	if !a.replyAt.IsZero() {
		st.LastContactMs = time.Since(a.replyAt).Milliseconds()
	}
	if st.Warnings == nil {
		st.Warnings = []string{}
	}
	return st
}

func (a *Announcer) warnings() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	if a.skewKnown && (a.skew > a.cfg.MaxClockSkew || -a.skew > a.cfg.MaxClockSkew) {
		out = append(out, fmt.Sprintf("this process's clock differs from the control-plane leader's by %s, more than svc.discovery.maxClockSkew (%s): leases, task times and segment versions assume synchronized clocks (run NTP)",
			a.skew.Round(time.Millisecond), a.cfg.MaxClockSkew))
	}
	if v := a.reply.Version; v != "" && v != a.cfg.Self.Version {
		out = append(out, fmt.Sprintf("this process runs version %s, the control-plane leader %s: finish the rolling upgrade", a.cfg.Self.Version, v))
	}
	return out
}
