//go:build !linux

package chaos

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// Network namespaces exist on Linux only; elsewhere every scenario runs on
// loopback and partitions are skipped.
type namespaces struct{}

func namespacesUnavailable() string { return "network namespaces need Linux" }

func newNamespaces() (*namespaces, error) { return nil, errors.New(namespacesUnavailable()) }

func (n *namespaces) addHost(int) (string, string, error)         { return "", "", errors.ErrUnsupported }
func (n *namespaces) cut(string, string, string, string) error    { return errors.ErrUnsupported }
func (n *namespaces) heal(string, string, string, string) error   { return errors.ErrUnsupported }
func (n *namespaces) listen(string, string) (net.Listener, error) { return nil, errors.ErrUnsupported }
func (n *namespaces) close()                                      {}
func (n *namespaces) dial(context.Context, string, string) (net.Conn, error) {
	return nil, errors.ErrUnsupported
}

func parentDeathSignal() *syscall.SysProcAttr { return nil }
