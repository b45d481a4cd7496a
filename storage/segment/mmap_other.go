//go:build !unix

package segment

import (
	"io"
	"os"
)

// mapFile reads the file into memory where memory mapping is unavailable.
func mapFile(f *os.File, size int) ([]byte, func([]byte) error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func([]byte) error { return nil }, nil
}
