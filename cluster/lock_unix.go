//go:build unix

package cluster

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockStore takes the lock bbolt holds on the log file while a node runs (an
// exclusive flock), so that Recover never moves the store of a running node.
func lockStore(path string) (unlock func(), err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: a strata process is using it, stop it first", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
