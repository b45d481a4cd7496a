package input

import (
	"bytes"
	"context"
	"io"
)

// Range is a byte range of a file: the records that start in [Start, End).
type Range struct{ Start, End int64 }

// rangeFormat is a format that can read the records of a file from any
// record start on, up to a limit.
type rangeFormat interface {
	// newRangeReader returns a reader of r that stops before the first record
	// starting at or after offset limit of r, reading past it to finish the
	// record that straddles it.
	newRangeReader(r io.Reader, cols []Column, source string, limit int64) Reader
}

// spanReader is a reader that tells where it began and stopped.
type spanReader interface {
	span() (first, stop int64)
	records() int64
}

// Ranges divides a split into ranges of about size bytes, each beginning at
// a line start, for several readers (OpenRange) to decode in parallel. It
// returns nil when the split cannot be divided: its format cannot read
// ranges, it is not a local file, it is compressed, or it is smaller than two
// ranges.
//
// A line start need not be a record start (a JSON object may span lines),
// so the reader of a range is right only if the reader of the range before
// stopped where it began (FileReader.Span); a caller checks that and, when it
// does not hold, reads on from where the previous reader stopped.
func Ranges(ctx context.Context, sp Split, f Format, size int64) ([]Range, error) {
	if _, ok := f.(rangeFormat); !ok || sp.openAt == nil || size <= 0 || sp.Size < 2*size {
		return nil, nil
	}
	if compressionByName(sp.Path) != "" {
		return nil, nil
	}
	body, err := sp.openAt(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	ra, ok := body.(io.ReaderAt)
	if !ok {
		return nil, nil
	}
	var head [4]byte
	n, _ := ra.ReadAt(head[:], 0)
	if compressionByMagic(head[:n]) != "" {
		return nil, nil
	}
	var out []Range
	start := int64(0)
	win := make([]byte, 4<<10)
	for next := size; next < sp.Size; next = max(next+size, start+1) {
		// The range ends after the first newline at or after next-1.
		b, err := lineStart(ra, next-1, sp.Size, win)
		if err != nil {
			return nil, err
		}
		if b >= sp.Size {
			break
		}
		out = append(out, Range{Start: start, End: b})
		start = b
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return append(out, Range{Start: start, End: sp.Size}), nil
}

// lineStart returns the offset after the first newline at or after off
// (end when there is none).
func lineStart(ra io.ReaderAt, off, end int64, win []byte) (int64, error) {
	for off < end {
		n, err := ra.ReadAt(win, off)
		if i := bytes.IndexByte(win[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		off += int64(n)
		if err == io.EOF || n == 0 {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	return end, nil
}

// OpenRange opens the records of split sp that start in byte range rg (see
// Ranges), in format f, reading columns cols.
func OpenRange(ctx context.Context, sp Split, f Format, cols []Column, systemFields []string, rg Range) (*FileReader, error) {
	rf, ok := f.(rangeFormat)
	if !ok || sp.openAt == nil {
		return nil, ErrNoSplitOpener
	}
	body, err := sp.openAt(ctx, rg.Start)
	if err != nil {
		return nil, err
	}
	fr := &FileReader{split: sp, body: body, count: &countingReader{r: body}, origin: rg.Start}
	fr.setSystemFields(cols, systemFields)
	fr.Reader = rf.newRangeReader(fr.count, cols, sp.URI, rg.End-rg.Start)
	return fr, nil
}

// Span reports, for a reader at its end, the file offsets of its first
// record and of the first record it left unread (the end of the file when
// none); ok is false when the reader cannot tell.
func (fr *FileReader) Span() (first, stop int64, ok bool) {
	s, ok := fr.Reader.(spanReader)
	if !ok {
		return 0, 0, false
	}
	first, stop = s.span()
	if first < 0 || stop < 0 {
		return 0, 0, false
	}
	return fr.origin + first, fr.origin + stop, true
}

// First reports the file offset of the reader's first record once its first
// Next has returned; ok is false before that, or when the reader cannot tell.
func (fr *FileReader) First() (int64, bool) {
	s, ok := fr.Reader.(spanReader)
	if !ok {
		return 0, false
	}
	first, _ := s.span()
	if first < 0 {
		return 0, false
	}
	return fr.origin + first, true
}

// Records is the number of records read so far, parse errors included (0
// when the reader does not count).
func (fr *FileReader) Records() int64 {
	if s, ok := fr.Reader.(spanReader); ok {
		return s.records()
	}
	return 0
}

// bufferUser is a reader that can read into a buffer of the caller's.
type bufferUser interface{ useBuffer(buf []byte) }

// UseBuffer has the reader read its input into buf (from buf[:0]) while it
// fits, before the first Next, so that a caller reading many ranges reuses
// its buffers instead of the reader allocating new ones. With KeepValues,
// values alias buf: the caller must leave it untouched while any are in
// use. It reports whether the format can.
func (fr *FileReader) UseBuffer(buf []byte) bool {
	u, ok := fr.Reader.(bufferUser)
	if ok {
		u.useBuffer(buf)
	}
	return ok
}
