//go:build linux

package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// nsPrefix starts the name of every network namespace the harness creates:
// strata-chaos-<harness pid>-<n>. Leftovers of harnesses that are gone are
// removed by name, so nothing else on the machine is touched.
const nsPrefix = "strata-chaos-"

// subnet holds the hosts' addresses. It exists only inside the harness's own
// namespaces (the bridge's and the hosts'), never on the machine's interfaces.
const subnet = "10.213.0."

// namespaces is a private network: a bridge in a namespace of its own (where
// the harness's clients also live, at 10.213.0.1) and one namespace per host,
// linked to the bridge by a veth pair created directly inside those
// namespaces. Links are cut with blackhole routes inside the two hosts'
// namespaces, which drop packets of established connections too and need
// nothing but iproute2.
type namespaces struct {
	id     string // strata-chaos-<pid>-
	bridge string // the bridge's namespace
	brFile *os.File
	self   *os.File // the harness's own network namespace, to switch back to
	mu     sync.Mutex
	hosts  []string // host namespaces created
	cuts   map[[2]string]bool
}

// namespacesUnavailable says why private networks cannot be made here, or ""
// when they can (root and the ip command).
func namespacesUnavailable() string {
	if os.Geteuid() != 0 {
		return "not running as root (network namespaces need CAP_SYS_ADMIN)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "the ip command (iproute2) is not installed"
	}
	return ""
}

func newNamespaces() (*namespaces, error) {
	removeLeftoverNamespaces()
	n := &namespaces{id: fmt.Sprintf("%s%d-", nsPrefix, os.Getpid()), cuts: map[[2]string]bool{}}
	n.bridge = n.id + "br"
	self, err := os.Open("/proc/self/ns/net")
	if err != nil {
		return nil, err
	}
	n.self = self
	steps := [][]string{
		{"netns", "add", n.bridge},
		{"-n", n.bridge, "link", "set", "lo", "up"},
		{"-n", n.bridge, "link", "add", "br0", "type", "bridge"},
		{"-n", n.bridge, "addr", "add", subnet + "1/24", "dev", "br0"},
		{"-n", n.bridge, "link", "set", "br0", "up"},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			n.close()
			return nil, err
		}
	}
	if n.brFile, err = os.Open("/run/netns/" + n.bridge); err != nil {
		n.close()
		return nil, err
	}
	// The bridge is in a namespace of its own, so bridged traffic does not
	// go through the host's netfilter hooks; nothing to set there.
	return n, nil
}

// addHost creates host number i's namespace (address 10.213.0.(10+i)) and
// returns its name and address.
func (n *namespaces) addHost(i int) (name, addr string, err error) {
	name = n.id + strconv.Itoa(i)
	addr = subnet + strconv.Itoa(10+i)
	veth := "v" + strconv.Itoa(i)
	n.mu.Lock()
	n.hosts = append(n.hosts, name)
	n.mu.Unlock()
	for _, s := range [][]string{
		{"netns", "add", name},
		{"-n", name, "link", "set", "lo", "up"},
		{"-n", n.bridge, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name},
		{"-n", n.bridge, "link", "set", veth, "master", "br0", "up"},
		{"-n", name, "addr", "add", addr + "/24", "dev", "eth0"},
		{"-n", name, "link", "set", "eth0", "up"},
	} {
		if err := ip(s...); err != nil {
			return "", "", err
		}
	}
	return name, addr, nil
}

// cut drops every packet between hosts a and b (namespaces and addresses),
// both ways.
func (n *namespaces) cut(aNS, aAddr, bNS, bAddr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := linkKey(aNS, bNS)
	if n.cuts[key] {
		return nil
	}
	if err := ip("-n", aNS, "route", "add", "blackhole", bAddr+"/32"); err != nil {
		return err
	}
	if err := ip("-n", bNS, "route", "add", "blackhole", aAddr+"/32"); err != nil {
		ip("-n", aNS, "route", "del", "blackhole", bAddr+"/32")
		return err
	}
	n.cuts[key] = true
	return nil
}

// linkKey names the link between two hosts, whichever way round.
func linkKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// heal restores the link between a and b.
func (n *namespaces) heal(aNS, aAddr, bNS, bAddr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := linkKey(aNS, bNS)
	if !n.cuts[key] {
		return nil
	}
	err1 := ip("-n", aNS, "route", "del", "blackhole", bAddr+"/32")
	err2 := ip("-n", bNS, "route", "del", "blackhole", aAddr+"/32")
	delete(n.cuts, key)
	if err1 != nil {
		return err1
	}
	return err2
}

// inBridge runs fn on an OS thread switched into the bridge's namespace, so
// that the sockets fn creates (a dial, a listener) belong to it. The thread is
// switched back before it is released; if that fails it stays locked and ends
// with the goroutine, so no other goroutine ever runs in the wrong namespace.
func (n *namespaces) inBridge(fn func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := setns(n.brFile); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns into %s: %w", n.bridge, err)
			return
		}
		fn()
		if setns(n.self) == nil {
			runtime.UnlockOSThread()
		}
		errc <- nil
	}()
	return <-errc
}

func (n *namespaces) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	var err error
	if e := n.inBridge(func() { c, err = (&net.Dialer{}).DialContext(ctx, network, addr) }); e != nil {
		return nil, e
	}
	return c, err
}

func (n *namespaces) listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	var err error
	if e := n.inBridge(func() { l, err = net.Listen(network, addr) }); e != nil {
		return nil, e
	}
	return l, err
}

func setns(f *os.File) error {
	return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
}

// close deletes the namespaces (their veths go with them). The processes in
// them must have ended first.
func (n *namespaces) close() {
	n.mu.Lock()
	hosts := n.hosts
	n.hosts = nil
	n.mu.Unlock()
	for _, h := range hosts {
		ip("netns", "del", h)
	}
	if n.brFile != nil {
		n.brFile.Close()
	}
	ip("netns", "del", n.bridge)
	if n.self != nil {
		n.self.Close()
	}
}

// removeLeftoverNamespaces deletes namespaces named strata-chaos-<pid>-*
// whose harness process no longer exists (a harness killed before its
// cleanup). Its server processes died with it (they run with a parent-death
// signal), so the namespaces are empty.
func removeLeftoverNamespaces() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], nsPrefix) {
			continue
		}
		rest := strings.TrimPrefix(f[0], nsPrefix)
		pid, err := strconv.Atoi(rest[:max(0, strings.IndexByte(rest, '-'))])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			continue // that harness is still running
		}
		ip("netns", "del", f[0])
	}
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// parentDeathSignal makes a server process die with the harness, even if
// the harness is killed before it can clean up.
func parentDeathSignal() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
