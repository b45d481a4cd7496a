package input

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"

	"strata/expr"
)

// FileReader reads the rows of one split.
type FileReader struct {
	Reader
	split  Split
	body   io.ReadCloser
	count  *countingReader
	closer func()
	sys    []sysCol
	origin int64 // file offset the reader started at (OpenRange)
}

type sysCol struct {
	idx int
	v   expr.Value
}

// Open opens a split, undoes its compression and returns a reader of the
// columns cols in format f. Columns named like the source's system fields
// (__file_uri, __file_path) are filled from the split.
func Open(ctx context.Context, sp Split, f Format, cols []Column, systemFields []string) (*FileReader, error) {
	if sp.open == nil {
		return nil, ErrNoSplitOpener
	}
	body, err := sp.open(ctx)
	if err != nil {
		return nil, err
	}
	fr := &FileReader{split: sp, body: body, count: &countingReader{r: body}}
	dec, closer, err := decompress(fr.count, sp.Path)
	if err != nil {
		body.Close()
		return nil, err
	}
	fr.closer = closer
	fr.setSystemFields(cols, systemFields)
	r, err := f.NewReader(dec, cols, sp.URI)
	if err != nil {
		fr.Close()
		return nil, err
	}
	fr.Reader = r
	return fr, nil
}

// setSystemFields notes the columns named like system fields: they are read
// from the split, not the data (the format sees them as absent columns).
func (fr *FileReader) setSystemFields(cols []Column, systemFields []string) {
	for i, c := range cols {
		for _, s := range systemFields {
			if c.Name != s {
				continue
			}
			v := fr.split.URI
			if s == SystemFilePath {
				v = fr.split.Path
			}
			fr.sys = append(fr.sys, sysCol{idx: i, v: expr.String(v)})
		}
	}
}

// Next reads the next row (see Reader).
func (fr *FileReader) Next(row []expr.Value) error {
	err := fr.Reader.Next(row)
	if err == nil {
		for _, s := range fr.sys {
			row[s.idx] = s.v
		}
	}
	return err
}

// KeepValues asks the reader to leave the values of earlier rows intact, so
// that rows may be held past the next call. It reports whether the format
// can; when it cannot, values still alias the reader's buffers.
func (fr *FileReader) KeepValues() bool {
	k, ok := fr.Reader.(interface{ keepValues() })
	if ok {
		k.keepValues()
	}
	return ok
}

// Bytes is the number of (compressed) bytes read from the file so far.
func (fr *FileReader) Bytes() int64 { return fr.count.n }

// Close releases the file.
func (fr *FileReader) Close() error {
	if fr.closer != nil {
		fr.closer()
	}
	return fr.body.Close()
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// decompress picks a decompressor by file extension, or else by the magic
// bytes of gzip and zstd streams.
func decompress(r io.Reader, name string) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	kind := compressionByName(name)
	if kind == "" {
		magic, _ := br.Peek(4)
		kind = compressionByMagic(magic)
	}
	switch kind {
	case "gz":
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	case "bz2":
		return bzip2.NewReader(br), nil, nil
	case "zst":
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	}
	return br, nil, nil
}

// compressionByName tells the compression of a file by its extension ("gz",
// "bz2", "zst"; "" for none).
func compressionByName(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".gz"):
		return "gz"
	case strings.HasSuffix(lower, ".bz2"):
		return "bz2"
	case strings.HasSuffix(lower, ".zst"):
		return "zst"
	}
	return ""
}

// compressionByMagic tells the compression of a stream by its first bytes
// (gzip and zstd have magic numbers).
func compressionByMagic(b []byte) string {
	switch {
	case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
		return "gz"
	case len(b) >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd:
		return "zst"
	}
	return ""
}
