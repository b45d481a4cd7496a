package deep

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"strata/storage/deep/s3test"
)

// A segment whose file was deleted (killed and swept) fails Get with an error
// that is fs.ErrNotExist on both storages, so that readers of old segments
// (asOf queries) can say the segment was killed rather than that the store
// failed.
func TestGetOfDeletedFileIsNotExist(t *testing.T) {
	ctx := context.Background()
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]DeepStorage{"local": local, "s3": s3Storage(t, s3test.Start(t), "druid")} {
		t.Run(name, func(t *testing.T) {
			src := writeFile(t, t.TempDir(), "seg", bytes.Repeat([]byte{7}, 100))
			spec, err := st.Put(ctx, SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0), src)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, spec); err != nil {
				t.Fatal(err)
			}
			err = st.Get(ctx, spec, filepath.Join(t.TempDir(), "index.seg"))
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Get of a deleted segment: %v; want an error that is fs.ErrNotExist", err)
			}
		})
	}
}
