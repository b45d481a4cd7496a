package process

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"strata/audit"
	"strata/fsm"
	"strata/internal/eventually"
)

func basicAuth(user, pass string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

// Users, roles and permissions on a three-node control cluster and a broker
// with basic security on: each change acknowledged by the leader holds at
// once on every node (followers that have not applied it yet, and the
// broker's copy fetched from the leader), and no password reaches the log.
func TestBasicSecurityAcrossNodes(t *testing.T) {
	t.Setenv("STRATA_TEST_ADMIN_PASSWORD", "admin-pw")
	auth := map[string]string{
		"svc.auth.authenticatorChain":                                `["basic"]`,
		"svc.auth.authorizers":                                       `["basic"]`,
		"svc.auth.authenticator.basic.initialAdminPassword":          `{"type":"environment","variable":"STRATA_TEST_ADMIN_PASSWORD"}`,
		"svc.auth.authenticator.basic.initialInternalClientPassword": "internal-pw",
		"svc.escalator.internalClientPassword":                       "internal-pw",
	}
	c := startCluster(t, 3, auth)
	leader := c.leader()
	admin := basicAuth("admin", "admin-pw")
	base := c.url(leader) + "/svc-ext/basic-security"
	// Watched in the state, not by logging in: failed logins would count
	// against the client's address (svc.auth.failedLogins.limit).
	eventually.True(t, "the leader to create the initial users", func() bool {
		var ok bool
		c.procs[leader].Node.FSM().Read(func(s *fsm.State) {
			db := s.SecurityDB()
			ok = db.Users["admin"] != nil && db.AuthzUsers["svc_system"] != nil
		})
		return ok
	}, slow)
	code, _, body := do(t, "GET", base+"/authentication/db/basic/users", "", "", admin)
	if code != 200 || body != `["admin","svc_system"]` {
		t.Fatalf("users: %d %s", code, body)
	}

	ports := freePorts(t, 1)
	brokerProps := map[string]string{"svc.broker.coordinatorUrls": c.url(0) + "," + c.url(1) + "," + c.url(2)}
	for k, v := range auth {
		brokerProps[k] = v
	}
	startRole(t, "broker", ports[0], brokerProps)
	nodes := []string{c.url(0), c.url(1), c.url(2), "http://" + ports[0]}

	// The broker reads the sys tables from the control plane's public
	// endpoints as the internal client, and filters them by the caller.
	for _, q := range []string{`SELECT COUNT(*) AS n FROM sys.segments`, `SELECT COUNT(*) AS n FROM sys.servers`} {
		body, _ := json.Marshal(map[string]string{"query": q})
		hdr := map[string]string{}
		for k, v := range admin {
			hdr[k] = v
		}
		eventually.True(t, q+" on the broker", func() bool {
			code, _, resp := do(t, "POST", "http://"+ports[0]+"/svc/v2/sql", "application/json", string(body), hdr)
			if code == 500 && strings.Contains(resp, "HTTP 401") {
				t.Fatalf("%s: the broker's call to the control plane was refused: %s", q, resp)
			}
			return code == 200 && strings.HasPrefix(resp, `[{"n":`)
		}, slow)
	}

	status := func(node string, hdr map[string]string) int {
		code, _, _ := do(t, "GET", node+"/status", "", "", hdr)
		return code
	}
	analyst := basicAuth("analyst", "analyst-pw")
	for _, n := range nodes {
		if got := status(n, analyst); got != 401 {
			t.Fatalf("%s: an unknown user got %d, want 401", n, got)
		}
	}

	post := func(path, body string) {
		t.Helper()
		ctype := ""
		if body != "" {
			ctype = "application/json"
		}
		// The author is the authenticated user, whatever the header says.
		hdr := map[string]string{"X-Svc-Author": "mallory"}
		for k, v := range admin {
			hdr[k] = v
		}
		code, _, resp := do(t, "POST", base+path, ctype, body, hdr)
		if code != 200 {
			t.Fatalf("POST %s: %d %s", path, code, resp)
		}
	}
	post("/authentication/db/basic/users/analyst", "")
	post("/authentication/db/basic/users/analyst/credentials", `{"password":"analyst-pw"}`)
	c.procs[leader].Node.FSM().Read(func(s *fsm.State) {
		for _, e := range s.Audit(fsm.AuditQuery{Type: fsm.AuditSecurity, Key: "analyst", Limit: 10}) {
			if e.Audit.Author != "admin" {
				t.Errorf("audit entry %d of analyst: author %q, want the authenticated admin", e.Index, e.Audit.Author)
			}
		}
	})
	// Logged in on every node at once (no role yet: 403, not 401).
	for _, n := range nodes {
		if got := status(n, analyst); got != 403 {
			t.Fatalf("%s: the new user got %d right after the acknowledged write, want 403", n, got)
		}
		if got := status(n, basicAuth("analyst", "wrong")); got != 401 {
			t.Fatalf("%s: a wrong password got %d", n, got)
		}
	}
	post("/authorization/db/basic/users/analyst", "")
	post("/authorization/db/basic/roles/observer", "")
	post("/authorization/db/basic/roles/observer/permissions", `[{"resource":{"type":"STATE","name":"STATE"},"action":"READ"}]`)
	post("/authorization/db/basic/users/analyst/roles/observer", "")
	for _, n := range nodes {
		if got := status(n, analyst); got != 200 {
			t.Fatalf("%s: granted STATE READ, the user got %d right after the acknowledged write, want 200", n, got)
		}
	}
	// A new password works at once everywhere; the old one fails at once
	// on the leader, and on the others as soon as they have the change (a
	// password verified before is not asked about again: see below).
	post("/authentication/db/basic/users/analyst/credentials", `{"password":"second-pw"}`)
	for _, n := range nodes {
		if got := status(n, basicAuth("analyst", "second-pw")); got != 200 {
			t.Fatalf("%s: the new password got %d", n, got)
		}
	}
	if got := status(c.url(leader), analyst); got != 401 {
		t.Fatalf("leader: the old password got %d after the change", got)
	}
	for _, n := range nodes {
		eventually.True(t, n+" to refuse the old password", func() bool { return status(n, analyst) == 401 }, eventually.Within(2*time.Second))
	}
	// Druid's shapes and errors.
	code, _, body = do(t, "GET", base+"/authorization/db/basic/users/analyst?full&simplifyPermissions", "", "", admin)
	if code != 200 || body != `{"name":"analyst","roles":[{"name":"observer","permissions":[{"resource":{"type":"STATE","name":"STATE"},"action":"READ"}]}]}` {
		t.Fatalf("full user: %d %s", code, body)
	}
	code, _, body = do(t, "GET", base+"/authorization/db/basic/roles/observer?full", "", "", admin)
	if code != 200 || !strings.Contains(body, `"users":["analyst"]`) || !strings.Contains(body, `"resourceNamePattern":"STATE"`) {
		t.Fatalf("full role: %d %s", code, body)
	}
	code, _, body = do(t, "GET", base+"/authentication/db/basic/users/nobody", "", "", admin)
	if code != 404 || body != `{"error":"User [nobody] does not exist."}` {
		t.Fatalf("unknown user: %d %s", code, body)
	}
	code, _, body = do(t, "POST", base+"/authorization/db/basic/roles/observer/permissions", "application/json", `[{"resource":{"type":"STATE","name":"a)|(b"},"action":"READ"}]`, admin)
	if code != 400 || !strings.Contains(body, "not a regular expression") {
		t.Fatalf("bad pattern: %d %s", code, body)
	}
	// Without the security config permission, the API is closed to the analyst.
	code, _, _ = do(t, "GET", base+"/authentication/db/basic/users", "", "", basicAuth("analyst", "second-pw"))
	if code != 403 {
		t.Fatalf("the analyst listed users: %d", code)
	}
	code, _, body = do(t, "DELETE", base+"/authentication/db/basic/users/analyst", "", "", admin)
	if code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	// Deleting the user locks it out at once on the leader. Elsewhere a
	// user known and verified before is not asked about again, so the
	// deletion holds once the node has it: as its Raft follower applies
	// the commit, as the broker's long poll returns (milliseconds).
	if got := status(c.url(leader), basicAuth("analyst", "second-pw")); got != 401 {
		t.Fatalf("leader: a deleted user got %d", got)
	}
	for _, n := range nodes {
		eventually.True(t, n+" to refuse the deleted user", func() bool {
			return status(n, basicAuth("analyst", "second-pw")) == 401
		}, eventually.Within(2*time.Second))
	}

	// No password is anywhere in the log: only hashes were proposed.
	c.waitConverged()
	for i := range c.procs {
		l, err := c.procs[i].Node.History().Log().LastIndex()
		if err != nil {
			t.Fatal(err)
		}
		var entries int
		c.procs[i].Node.History().Log().Scan(1, l, func(e audit.Entry) error {
			entries++
			for _, pw := range []string{"admin-pw", "internal-pw", "analyst-pw", "second-pw"} {
				if strings.Contains(string(e.Data), pw) {
					t.Errorf("node %d: log entry %d holds the password %q", i, e.Index, pw)
				}
			}
			return nil
		})
		if entries == 0 {
			t.Fatalf("node %d: scanned no entries", i)
		}
	}
}

// TestBrokerAuthFailuresInTheAudit: a data node's authentication failures
// reach the leader's audit as one counted entry per window, naming the
// node, as a control node's own do (issue 18: counted, not one per request).
func TestBrokerAuthFailuresInTheAudit(t *testing.T) {
	auth := map[string]string{
		"svc.auth.authenticatorChain":                                `["basic"]`,
		"svc.auth.authorizers":                                       `["basic"]`,
		"svc.auth.authenticator.basic.initialAdminPassword":          "admin-pw",
		"svc.auth.authenticator.basic.initialInternalClientPassword": "internal-pw",
		"svc.escalator.internalClientPassword":                       "internal-pw",
		"svc.auth.failureAuditPeriod":                                "1s",
	}
	c := startCluster(t, 1, auth)
	leader := c.leader()
	eventually.True(t, "the leader to create the initial users", func() bool {
		var ok bool
		c.procs[leader].Node.FSM().Read(func(s *fsm.State) { ok = s.SecurityDB().Users["admin"] != nil })
		return ok
	}, slow)
	ports := freePorts(t, 1)
	brokerProps := map[string]string{"svc.broker.coordinatorUrls": c.url(leader)}
	for k, v := range auth {
		brokerProps[k] = v
	}
	startRole(t, "broker", ports[0], brokerProps)
	broker := "http://" + ports[0]
	for range 4 {
		if code, _, _ := do(t, "GET", broker+"/status", "", "", basicAuth("admin", "guess")); code != 401 {
			t.Fatalf("a wrong password on the broker got %d, want 401", code)
		}
	}
	// One entry per window of the broker's: the four failures may straddle
	// two windows, so the entries are summed.
	type record struct {
		Type, Author, Comment string
		Command               struct{ Missing, Wrong, Throttled int }
	}
	entries := func() []record {
		code, _, body := do(t, "GET", c.url(leader)+"/svc/coordinator/v1/audit?type=security.authFailures", "", "", basicAuth("admin", "admin-pw"))
		if code != 200 {
			t.Fatalf("audit: %d %s", code, body)
		}
		var out struct{ Records []record }
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("audit: %v: %s", err, body)
		}
		return out.Records
	}
	wrong := func() (n int) {
		for _, e := range entries() {
			n += e.Command.Wrong
		}
		return n
	}
	eventually.True(t, "the broker's failures in the leader's audit", func() bool { return wrong() >= 4 }, slow)
	got := entries()
	for _, e := range got {
		if e.Type != "security.authFailures" || e.Author != "strata" || e.Comment != "authentication failures on "+broker ||
			e.Command.Missing != 0 || e.Command.Throttled != 0 {
			t.Errorf("audit entry %+v, want the broker's wrong passwords, naming %s", e, broker)
		}
	}
	if n := wrong(); n != 4 || len(got) > 2 {
		t.Errorf("audit entries %+v count %d wrong passwords, want the broker's 4 in one or two windows", got, n)
	}
}

// TestFollowerAuthFailuresInTheAudit: a control node that does not lead
// cannot propose, so it sends its windows to the leader like a data node.
func TestFollowerAuthFailuresInTheAudit(t *testing.T) {
	auth := map[string]string{
		"svc.auth.authenticatorChain":                                `["basic"]`,
		"svc.auth.authorizers":                                       `["basic"]`,
		"svc.auth.authenticator.basic.initialAdminPassword":          "admin-pw",
		"svc.auth.authenticator.basic.initialInternalClientPassword": "internal-pw",
		"svc.escalator.internalClientPassword":                       "internal-pw",
		"svc.auth.failureAuditPeriod":                                "1s",
	}
	c := startCluster(t, 3, auth)
	leader := c.leader()
	follower := (leader + 1) % 3
	eventually.True(t, "the initial users on the follower", func() bool {
		var ok bool
		c.procs[follower].Node.FSM().Read(func(s *fsm.State) { ok = s.SecurityDB().Users["admin"] != nil })
		return ok
	}, slow)
	for range 3 {
		if code, _, _ := do(t, "GET", c.url(follower)+"/status", "", "", basicAuth("admin", "guess")); code != 401 {
			t.Fatalf("a wrong password on the follower got %d, want 401", code)
		}
	}
	wrong := func() (n int) {
		c.procs[leader].Node.FSM().Read(func(s *fsm.State) {
			for _, e := range s.Audit(fsm.AuditQuery{Type: fsm.AuditAuthFailures, Limit: 100}) {
				if e.Audit.Comment != "authentication failures on "+c.procs[follower].Node.ID() {
					t.Errorf("audit entry %+v does not name the follower %s", e.Audit, c.procs[follower].Node.ID())
				}
				var cmd struct{ Wrong int }
				json.Unmarshal([]byte(e.Payload), &cmd)
				n += cmd.Wrong
			}
		})
		return n
	}
	eventually.True(t, "the follower's failures in the leader's audit", func() bool { return wrong() >= 3 }, slow)
	if n := wrong(); n != 3 {
		t.Errorf("the audit counts %d wrong passwords, want the follower's 3", n)
	}
}
