package server

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"strata/internal/eventually"
)

// flipCachedBytes flips two bytes of the one segment file in a historical's
// cache, in place (a failing disk, a stray write): 100 bytes before the
// footer, inside the values of "added", the column stored last.
func flipCachedBytes(t *testing.T, h *dpHistorical) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.dir, "*", "index.seg"))
	if len(files) != 1 {
		t.Fatalf("cache of %s holds %d segment files, want 1", h.url, len(files))
	}
	f, err := os.OpenFile(files[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	var tr [24]byte
	if _, err := f.ReadAt(tr[:], st.Size()-24); err != nil {
		t.Fatal(err)
	}
	off := int64(binary.LittleEndian.Uint64(tr[:])) - 100
	var b [2]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^b[0], ^b[1]}, off); err != nil {
		t.Fatal(err)
	}
}

// Two historicals hold a replica of a segment; the file of the one the
// broker reads from is damaged after it answered a query, in a column that
// query did not read (so no verified copy of it is cached). The next query
// over that column is still answered correctly, from the other replica,
// and the damaged copy is downloaded again.
func TestBrokerAnswersFromReplicaWhenACachedFileIsDamaged(t *testing.T) {
	f := newDPFixture(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []dpRow
	for i := range 1000 {
		rows = append(rows, dpRow{fmt.Sprintf("2013-08-31T%02d:%02d:%02dZ", i/120, i/2%60, i%2*30),
			fmt.Sprintf("page%d", rng.IntN(7)), rng.Int64N(1000)})
	}
	f.publish(f.segment("wiki", "2013-08-31/2013-09-01", "v1", 0, 1, rows))
	var n1, n2 atomic.Int64
	h1 := f.startHistorical(t.TempDir(), subQueryCounter(&n1))
	h2 := f.startHistorical(t.TempDir(), subQueryCounter(&n2))
	h1.node.Start()
	h2.node.Start()
	b := startBroker(t, []string{h1.url, h2.url}, nil)
	b.b.Start()
	b.waitReplicas(t, "wiki", 1, 2)
	const byCount = `{"queryType":"topN","dataSource":"wiki","intervals":["2013-08-31/2013-09-01"],"granularity":"all",
	  "dimension":"page","metric":"rows","threshold":7,"aggregations":[{"type":"count","name":"rows"}]}`
	const bySum = `{"queryType":"topN","dataSource":"wiki","intervals":["2013-08-31/2013-09-01"],"granularity":"all",
	  "dimension":"page","metric":"added","threshold":7,"aggregations":[{"type":"longSum","name":"added","fieldName":"added"},{"type":"count","name":"rows"}]}`
	if code, body, _ := b.query(t, byCount); code != 200 {
		t.Fatalf("intact: %d %s", code, body)
	}
	// The historical that answered (the broker's first choice) is the victim.
	victim, healthy, counter := h1, h2, &n1
	if n2.Load() == 1 {
		victim, healthy, counter = h2, h1, &n2
	}
	if counter.Load() != 1 {
		t.Fatalf("sub-queries: %d and %d, want one", n1.Load(), n2.Load())
	}
	ref := startBroker(t, []string{healthy.url}, nil)
	ref.b.Start()
	ref.waitReplicas(t, "wiki", 1, 1)
	code, want, _ := ref.query(t, bySum)
	if code != 200 {
		t.Fatalf("from the healthy replica: %d %s", code, want)
	}
	gets := f.store.gets.Load()
	flipCachedBytes(t, victim)
	code, got, _ := b.query(t, bySum)
	if counter.Load() != 2 {
		t.Fatalf("the damaged historical received %d sub-queries, want 2", counter.Load())
	}
	if code != 200 || got != want {
		t.Fatalf("with one damaged replica: %d %s\nwant %s", code, got, want)
	}
	// The victim downloads its copy again and answers from it.
	eventually.True(t, "the damaged copy to be downloaded again", func() bool {
		return f.store.gets.Load() == gets+1 && len(victim.served()) == 1
	})
	alone := startBroker(t, []string{victim.url}, nil)
	alone.b.Start()
	alone.waitReplicas(t, "wiki", 1, 1)
	if code, got, _ := alone.query(t, bySum); code != 200 || got != want {
		t.Fatalf("from the new copy: %d %s\nwant %s", code, got, want)
	}
}
