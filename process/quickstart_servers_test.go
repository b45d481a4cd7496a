package process

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
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
	proc, err := StartQuickstart(QuickstartProps(t.TempDir()), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	want := map[string]string{
		QuickstartCoordinator:   server.RoleCoordinator,
		QuickstartRouter:        server.RoleRouter,
		QuickstartHistorical:    server.RoleHistorical,
		QuickstartBroker:        server.RoleBroker,
		QuickstartMiddleManager: server.RoleMiddleManager,
	}
	var last []map[string]any
	eventually.True(t, "every quickstart process listed", func() bool {
		resp, err := http.Get("http://" + QuickstartRouter + "/svc/coordinator/v1/servers?simple")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		last = nil
		if json.NewDecoder(resp.Body).Decode(&last) != nil {
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
	}, eventually.Within(20*time.Second))
	if t.Failed() {
		t.Logf("servers: %v", last)
	}
}
