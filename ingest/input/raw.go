package input

import (
	"context"
	"io"
)

// OpenRaw opens a split and undoes its compression, for a reader that needs
// the file's bytes as written (schema discovery reads JSON keys in document
// order, which decoding into a map loses).
func OpenRaw(ctx context.Context, sp Split) (io.ReadCloser, error) {
	if sp.open == nil {
		return nil, ErrNoSplitOpener
	}
	body, err := sp.open(ctx)
	if err != nil {
		return nil, err
	}
	dec, closer, err := decompress(body, sp.Path)
	if err != nil {
		body.Close()
		return nil, err
	}
	return rawFile{Reader: dec, closeFns: []func(){closer, func() { body.Close() }}}, nil
}

type rawFile struct {
	io.Reader
	closeFns []func()
}

func (f rawFile) Close() error {
	for _, c := range f.closeFns {
		if c != nil {
			c()
		}
	}
	return nil
}
