package process

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/fsm"
	"strata/internal/eventually"
	"strata/props"
	"strata/server"
)

// lockQuickstart holds /tmp/quickstart.lock while a test runs a quickstart:
// its ports are fixed, so two at once (another test binary, a conformance
// run, `make bench-console`) would collide.
func lockQuickstart(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/tmp/quickstart.lock", os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

// TestQuickstartListsEveryProcess: the quickstart's listeners (control node,
// router, historical, broker, middle manager) each announce through
// discovery, so /svc/coordinator/v1/servers?simple (and the broker's
// sys.servers, which reads it) lists every process with its role, as Druid's
// sys.servers lists every node. Before, only the historical was listed: the
// console's Services view could not show the broker.
func TestQuickstartListsEveryProcess(t *testing.T) {
	lockQuickstart(t)
	checkQuickstartLists(t, QuickstartProps(t.TempDir()), "", "")
}

// TestQuickstartListsEveryProcessWithSecurity: with security on, the
// listeners announce with the escalator's internal credentials.
func TestQuickstartListsEveryProcessWithSecurity(t *testing.T) {
	lockQuickstart(t)
	p := QuickstartProps(t.TempDir())
	for k, v := range map[string]string{
		"svc.auth.authenticatorChain":                                `["basic"]`,
		"svc.auth.authenticator.basic.type":                          "basic",
		"svc.auth.authenticator.basic.initialAdminPassword":          "admin-pw",
		"svc.auth.authenticator.basic.initialInternalClientPassword": "internal-pw",
		"svc.auth.authenticator.basic.authorizerName":                "basic",
		"svc.auth.authorizers":                                       `["basic"]`,
		"svc.auth.authorizer.basic.type":                             "basic",
		"svc.escalator.type":                                         "basic",
		"svc.escalator.internalClientPassword":                       "internal-pw",
	} {
		p.Set(k, v)
	}
	checkQuickstartLists(t, p, "admin", "admin-pw")
}

func checkQuickstartLists(t *testing.T, p *props.Properties, user, password string) {
	t.Helper()
	proc, err := StartQuickstart(p, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	url := "http://" + QuickstartRouter
	if user != "" {
		// Watched in the state, not by logging in: failed logins before the
		// leader creates the admin would lock the test's address out. Then
		// asked of the control node, which checks logins against that state
		// (the router, against its copy, fetched every so often).
		eventually.True(t, "the leader to create the initial users", func() bool {
			var ok bool
			proc.Node.FSM().Read(func(s *fsm.State) { ok = s.SecurityDB().Users[user] != nil })
			return ok
		}, eventually.Within(20*time.Second))
		url = "http://" + QuickstartCoordinator
	}
	want := map[string]string{
		QuickstartCoordinator:   server.RoleCoordinator,
		QuickstartRouter:        server.RoleRouter,
		QuickstartHistorical:    server.RoleHistorical,
		QuickstartBroker:        server.RoleBroker,
		QuickstartMiddleManager: server.RoleMiddleManager,
	}
	var last []map[string]any
	var lastBody string
	listed := func() bool {
		req, _ := http.NewRequest(http.MethodGet, url+"/svc/coordinator/v1/servers?simple", nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		last = nil
		body, _ := io.ReadAll(resp.Body)
		lastBody = fmt.Sprintf("%d %s", resp.StatusCode, body)
		if json.Unmarshal(body, &last) != nil {
			return false
		}
		for host, role := range want {
			if !slices.ContainsFunc(last, func(s map[string]any) bool {
				roles, _ := s["role"].(string)
				return s["host"] == host && slices.Contains(strings.Split(roles, ","), role)
			}) {
				return false
			}
		}
		return true
	}
	defer func() {
		if t.Failed() {
			t.Logf("servers: %s", lastBody)
		}
	}()
	eventually.True(t, "every quickstart process listed", listed, eventually.Within(20*time.Second))
}
