package server

import (
	"bufio"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"strata/discovery"
)

type module struct {
	Name     string `json:"name"`
	Artifact string `json:"artifact,omitempty"`
	Version  string `json:"version,omitempty"`
}

type memory struct {
	MaxMemory    int64 `json:"maxMemory"`
	TotalMemory  int64 `json:"totalMemory"`
	FreeMemory   int64 `json:"freeMemory"`
	UsedMemory   int64 `json:"usedMemory"`
	DirectMemory int64 `json:"directMemory"`
}

// DruidVersion is the Apache Druid release whose API Strata serves: the
// conformance corpora (../shared/conformance) are taken from Druid's master
// of 2025-10-29, released as 35.0.0. /status reports it as "version",
// where Druid's clients read the server's version and gate on it (plywood
// refuses anything below 0.14.0); Strata's own is "strataVersion".
const DruidVersion = "35.0.0"

type statusInfo struct {
	Version       string   `json:"version"` // DruidVersion
	StrataVersion string   `json:"strataVersion"`
	Modules       []module `json:"modules"`
	Memory        memory   `json:"memory"`
	// Discovery: the leader this process announces to, and warnings when
	// its clock or version disagrees with the leader's.
	Discovery *discovery.Status `json:"discovery,omitempty"`
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	roles := make([]string, 0, len(s.roles))
	for role := range s.roles {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	mods := make([]module, 0, len(roles))
	for _, role := range roles {
		mods = append(mods, module{Name: "strata-" + role, Artifact: "strata", Version: Version})
	}
	info := statusInfo{Version: DruidVersion, StrataVersion: Version, Modules: mods, Memory: readMemory()}
	if s.announcer != nil {
		st := s.announcer.Status()
		info.Discovery = &st
	}
	writeJSON(w, http.StatusOK, info)
}

// readMemory maps Go's memory figures onto Druid's JVM-shaped ones: total is what
// the runtime holds from the OS, free what it holds but does not use, max the
// GOMEMLIMIT or, without one, the machine's memory. directMemory is unknown (-1).
func readMemory() memory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total := int64(ms.Sys)
	used := int64(ms.HeapInuse + ms.StackInuse + ms.MSpanInuse + ms.MCacheInuse + ms.GCSys + ms.OtherSys + ms.BuckHashSys)
	if used > total {
		used = total
	}
	maxMem := debug.SetMemoryLimit(-1)
	if maxMem == math.MaxInt64 {
		maxMem = systemMemory()
	}
	return memory{MaxMemory: maxMem, TotalMemory: total, FreeMemory: total - used, UsedMemory: used, DirectMemory: -1}
}

func systemMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return -1
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, true)
}

func (s *Server) properties(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.props.Visible())
}

// discovered: a control node is discovered once it is in a cluster with a known
// leader; other processes once they can see a control-plane leader.
func (s *Server) discovered() bool {
	if s.node != nil {
		return s.node.Joined()
	}
	return true
}

func (s *Server) selfDiscoveredStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"selfDiscovered": s.discovered()})
}

func (s *Server) selfDiscovered(w http.ResponseWriter, r *http.Request) {
	if s.discovered() {
		writeEmpty(w, http.StatusOK)
		return
	}
	writeEmpty(w, http.StatusServiceUnavailable)
}
