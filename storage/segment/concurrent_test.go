package segment

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestConcurrentReaders reads one segment from many goroutines at once,
// including the first touch of every block and dictionary, which verifies
// checksums and loads state lazily. Run with -race.
func TestConcurrentReaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	rows := make([]Row, 500)
	for i := range rows {
		rows[i] = randRow(rng, int64(i)*100)
	}
	path, _ := writeSegment(t, allKindsSpec(32), rows)
	seg := mustOpen(t, path)
	want, err := readAll(seg)
	if err != nil {
		t.Fatal(err)
	}
	seg2 := mustOpen(t, path) // fresh: nothing verified or loaded yet
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := readAll(seg2)
			if err != nil {
				errs <- err
				return
			}
			for name, c := range want {
				for r := range rows {
					if fingerprint(got, []string{name}, r) != fingerprint(map[string]*colData{name: c}, []string{name}, r) {
						errs <- errorf("column %s row %d differs", name, r)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
