package deep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Local stores segments as files under a root directory:
// <root>/<key>/index.seg.
type Local struct {
	root string
}

// NewLocal returns a Local storage rooted at dir (created if missing).
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, fmt.Errorf("deep: local storage needs %s", PropStorageDirectory)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	return &Local{root: abs}, nil
}

// Root is the absolute root directory.
func (l *Local) Root() string { return l.root }

func (l *Local) pathOf(key string) string {
	return filepath.Join(l.root, filepath.FromSlash(key), SegmentFile)
}

// Put implements DeepStorage.
func (l *Local) Put(ctx context.Context, key, localPath string) (LoadSpec, error) {
	if err := checkKey(key); err != nil {
		return LoadSpec{}, err
	}
	if err := ctx.Err(); err != nil {
		return LoadSpec{}, err
	}
	src, err := os.Open(localPath)
	if err != nil {
		return LoadSpec{}, err
	}
	defer src.Close()
	dst := l.pathOf(key)
	if err := copyFileAtomic(dst, src); err != nil {
		return LoadSpec{}, fmt.Errorf("deep: put %s: %w", key, err)
	}
	return LoadSpec{Type: "local", Path: dst}, nil
}

// resolve checks that a local load spec points inside the root, so that a
// load spec can never make a node read or delete arbitrary files.
func (l *Local) resolve(spec LoadSpec) (string, error) {
	if spec.Type != "local" {
		return "", fmt.Errorf("deep: local storage cannot handle load spec type %q", spec.Type)
	}
	p := filepath.Clean(spec.Path)
	rel, err := filepath.Rel(l.root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || !filepath.IsAbs(p) {
		return "", fmt.Errorf("deep: path %q is outside storage directory %q", spec.Path, l.root)
	}
	return p, nil
}

// Get implements DeepStorage.
func (l *Local) Get(ctx context.Context, spec LoadSpec, localPath string) error {
	p, err := l.resolve(spec)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("deep: get: %w", err)
	}
	defer src.Close()
	return copyFileAtomic(localPath, src)
}

// Delete implements DeepStorage. Emptied key directories are removed too.
func (l *Local) Delete(ctx context.Context, spec LoadSpec) error {
	p, err := l.resolve(spec)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deep: delete: %w", err)
	}
	for dir := filepath.Dir(p); dir != l.root && strings.HasPrefix(dir, l.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty (or gone): stop
			break
		}
	}
	return nil
}

// List implements DeepStorage.
func (l *Local) List(ctx context.Context, prefix string) ([]string, error) {
	// Start at the deepest directory the prefix names entirely.
	start := l.root
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		if err := checkKey(prefix[:i]); err != nil {
			return nil, err
		}
		start = filepath.Join(l.root, filepath.FromSlash(prefix[:i]))
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || d.Name() != SegmentFile {
			return nil
		}
		rel, err := filepath.Rel(l.root, filepath.Dir(p))
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) && key != "." {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("deep: list: %w", err)
	}
	sort.Strings(keys)
	return keys, nil
}
