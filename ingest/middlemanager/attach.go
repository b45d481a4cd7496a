package middlemanager

import (
	"sync"

	"strata/props"
)

// The worker of a process is found by the properties it was configured from:
// the process starts it, and the HTTP server of the same properties serves its
// endpoints.
var (
	attachMu sync.Mutex
	attached = map[*props.Properties]*Worker{}
)

// Attach makes w the worker of the process configured by p.
func Attach(p *props.Properties, w *Worker) {
	attachMu.Lock()
	defer attachMu.Unlock()
	attached[p] = w
}

// Detach forgets the worker of p.
func Detach(p *props.Properties) {
	attachMu.Lock()
	defer attachMu.Unlock()
	delete(attached, p)
}

// Attached returns the worker of p, or nil.
func Attached(p *props.Properties) *Worker {
	attachMu.Lock()
	defer attachMu.Unlock()
	return attached[p]
}
