package historical

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"strata/segmeta"
	"strata/storage/segment"
)

// The segment cache: each loaded segment has a directory under one cache
// location holding the segment file and its descriptor (the DataSegment
// JSON). The descriptor is written last, so a directory without one is an
// interrupted download and is removed at start-up.
const (
	segmentFile    = "index.seg"
	descriptorFile = "descriptor.json"
	tmpPrefix      = ".tmp-"
)

// Location is one segment cache directory and the bytes it may hold.
type Location struct {
	Path    string
	MaxSize int64
}

// location tracks the bytes reserved in a Location (guarded by Node.mu).
type location struct {
	Location
	used int64
}

// ParseLocations reads svc.segmentCache.locations: either Druid's JSON form
// `[{"path":"/x","maxSize":"300g"}]` (maxSize a number or a size string)
// or a comma-separated list of paths, each with defaultMax bytes.
func ParseLocations(v string, defaultMax int64) ([]Location, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, errors.New("no segment cache location")
	}
	if !strings.HasPrefix(v, "[") {
		var out []Location
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, Location{Path: p, MaxSize: defaultMax})
			}
		}
		return out, nil
	}
	var raw []struct {
		Path    string          `json:"path"`
		MaxSize json.RawMessage `json:"maxSize"`
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("segment cache locations: %w", err)
	}
	var out []Location
	for i, r := range raw {
		if r.Path == "" {
			return nil, fmt.Errorf("segment cache location %d has no path", i)
		}
		size := defaultMax
		if len(r.MaxSize) > 0 && string(r.MaxSize) != "null" {
			s := strings.Trim(string(r.MaxSize), `"`)
			n, err := ParseBytes(s)
			if err != nil {
				return nil, fmt.Errorf("segment cache location %s: maxSize: %w", r.Path, err)
			}
			size = n
		}
		out = append(out, Location{Path: r.Path, MaxSize: size})
	}
	if len(out) == 0 {
		return nil, errors.New("no segment cache location")
	}
	return out, nil
}

// ParseBytes parses a byte count: a plain number, or a number with a unit
// as Druid's HumanReadableBytes writes them (k, m, g, t, p: powers of 1000;
// KiB, MiB, GiB, TiB, PiB: powers of 1024; case-insensitive, optional "b").
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	base := int64(1000)
	if strings.HasSuffix(unit, "ib") {
		base, unit = 1024, strings.TrimSuffix(unit, "ib")
	} else {
		unit = strings.TrimSuffix(unit, "b")
	}
	pow := strings.Index("kmgtp", unit) + 1
	if unit == "" {
		pow = 0
	} else if len(unit) != 1 || pow == 0 {
		return 0, fmt.Errorf("invalid byte size %q: unknown unit", s)
	}
	for range pow {
		if n > (1<<63-1)/base {
			return 0, fmt.Errorf("byte size %q overflows", s)
		}
		n *= base
	}
	return n, nil
}

// dirName maps a segment id to a directory name: safe characters are kept,
// others %-escaped; overlong names end in a hash (the descriptor keeps the
// real id, so names need not be reversible).
func dirName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < unicode.MaxASCII && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
			continue
		}
		for _, c := range []byte(string(r)) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	name := b.String()
	if name == "" || name[0] == '.' {
		name = "%" + name
	}
	if len(name) > 180 {
		sum := sha256.Sum256([]byte(id))
		name = name[:140] + "~" + hex.EncodeToString(sum[:12])
	}
	return name
}

// cached is a segment found in a cache location at start-up.
type cached struct {
	seg  *segmeta.DataSegment
	dir  string
	size int64
}

// scanLocation lists the complete segment directories of a location and
// removes interrupted downloads and unreadable descriptors.
func scanLocation(root string) ([]cached, []error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{err}
	}
	var out []cached
	var problems []error
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() {
			continue
		}
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			os.RemoveAll(dir)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, descriptorFile))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: no readable descriptor, removed: %w", dir, err))
			os.RemoveAll(dir)
			continue
		}
		var seg segmeta.DataSegment
		if err := json.Unmarshal(b, &seg); err != nil {
			problems = append(problems, fmt.Errorf("%s: bad descriptor, removed: %w", dir, err))
			os.RemoveAll(dir)
			continue
		}
		var size int64
		if !seg.IsTombstone() {
			st, err := os.Stat(filepath.Join(dir, segmentFile))
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: segment file missing, removed", dir))
				os.RemoveAll(dir)
				continue
			}
			size = st.Size()
		}
		out = append(out, cached{seg: &seg, dir: dir, size: size})
	}
	return out, problems
}

// openVerified opens a cached segment file and checks it completely: the
// size the segment was published with, then every checksum. A file that
// fails is not used (the caller deletes and re-downloads it).
func openVerified(dir string, seg *segmeta.DataSegment) (*segment.Segment, int64, error) {
	path := filepath.Join(dir, segmentFile)
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if seg.Size > 0 && st.Size() != seg.Size {
		return nil, 0, fmt.Errorf("%s: %d bytes, the segment was published with %d", path, st.Size(), seg.Size)
	}
	data, err := segment.Open(path)
	if err != nil {
		return nil, 0, err
	}
	if err := data.Verify(); err != nil {
		data.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return data, st.Size(), nil
}

// writeDescriptor records a completed download.
func writeDescriptor(dir string, seg *segmeta.DataSegment) error {
	return os.WriteFile(filepath.Join(dir, descriptorFile), seg.AppendJSON(nil), 0o644)
}
