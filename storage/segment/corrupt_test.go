package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// smallSegment returns the bytes of a segment with every column kind, nulls,
// several blocks per column and all three codecs.
func smallSegment(t testing.TB) []byte {
	rng := rand.New(rand.NewPCG(5, 5))
	spec := allKindsSpec(16)
	spec.ColumnCompression = map[string]Compression{"s": CompressLZ4, "mv": CompressZstd, "l": CompressNone}
	rows := make([]Row, 40)
	for i := range rows {
		rows[i] = randRow(rng, int64(i)*1000)
	}
	path, _ := writeSegment(t, spec, rows)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// openAndReadAll opens data and reads every value, returning the first
// error. It never returns wrong data silently: readAll cross-checks the
// redundant structures, and callers compare against the intact result.
func openAndReadAll(data []byte) (map[string]*colData, error) {
	seg, err := OpenBytes(data)
	if err != nil {
		return nil, err
	}
	cols, err := readAll(seg)
	if err != nil {
		return nil, err
	}
	return cols, seg.Verify()
}

func TestCorruptByteDetected(t *testing.T) {
	data := smallSegment(t)
	if _, err := openAndReadAll(data); err != nil {
		t.Fatalf("intact segment: %v", err)
	}
	step := 1
	if testing.Short() || raceEnabled {
		step = 7
	}
	bad := make([]byte, len(data))
	for off := 0; off < len(data); off += step {
		for _, mask := range []byte{0x01, 0xff} {
			copy(bad, data)
			bad[off] ^= mask
			if _, err := openAndReadAll(bad); err == nil {
				t.Fatalf("flip %#x at offset %d of %d not detected", mask, off, len(data))
			}
		}
	}
}

func TestLazyChecksum(t *testing.T) {
	data := smallSegment(t)
	seg, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	// Damage the first block of __time: Open already succeeded, the first
	// read of that block must fail.
	b := seg.ft.columns[0].blocks[0]
	bad := bytes.Clone(data)
	bad[b.off] ^= 0x10
	seg, err = OpenBytes(bad)
	if err != nil {
		t.Fatalf("open should not read blocks: %v", err)
	}
	if _, err := seg.Time().Longs(0, nil); err == nil {
		t.Fatal("damaged block read without error")
	}
	if _, err := seg.Time().Longs(1, nil); err != nil {
		t.Fatalf("intact block: %v", err)
	}
	if err := seg.Verify(); err == nil {
		t.Fatal("Verify missed the damage")
	}
}

func TestTruncationDetected(t *testing.T) {
	data := smallSegment(t)
	for n := 0; n < len(data); n += 1 + n/16 {
		if _, err := OpenBytes(data[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: not detected", n, len(data))
		}
	}
	// Through the file system and mmap as well.
	path := filepath.Join(t.TempDir(), "trunc.seg")
	for _, n := range []int{0, 10, len(data) / 2, len(data) - 1} {
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := Open(path); err == nil {
			s.Close()
			t.Fatalf("truncated file of %d bytes opened", n)
		}
	}
	// Appended garbage moves the trailer: also an error.
	if _, err := OpenBytes(append(bytes.Clone(data), 0)); err == nil {
		t.Fatal("extra byte not detected")
	}
}

// resign recomputes every checksum of a (possibly mutated) segment, so that
// the decoders behind the checksums see the mutation. Returns nil when the
// trailer or footer cannot be located or decoded.
func resign(data []byte) []byte {
	if len(data) < headerSize+trailerSize {
		return nil
	}
	t := data[len(data)-trailerSize:]
	footOff := binary.LittleEndian.Uint64(t)
	end := uint64(len(data) - trailerSize)
	if footOff < headerSize || footOff > end {
		return nil
	}
	ft, err := decodeFooter(data[footOff:end])
	if err != nil {
		return nil
	}
	for i := range ft.columns {
		c := &ft.columns[i]
		for j := range c.regions {
			r := &c.regions[j]
			if r.off <= footOff && r.length <= footOff-r.off {
				r.crc = crc(data[r.off : r.off+r.length])
			}
		}
		for j := range c.blocks {
			b := &c.blocks[j]
			if b.off <= footOff && b.length <= footOff-b.off {
				b.crc = crc(data[b.off : b.off+b.length])
			}
		}
	}
	fb := ft.encode()
	out := append(bytes.Clone(data[:footOff]), fb...)
	return append(out, encodeTrailer(footOff, fb)...)
}

func TestMutationsBehindValidChecksums(t *testing.T) {
	// With checksums recomputed, damage reaches the decoders: they must
	// report errors or decode something, never panic.
	data := smallSegment(t)
	rng := rand.New(rand.NewPCG(11, 11))
	n := 3000
	if testing.Short() || raceEnabled {
		n = 300
	}
	for i := 0; i < n; i++ {
		bad := bytes.Clone(data)
		for k := 0; k < 1+rng.IntN(3); k++ {
			bad[rng.IntN(len(bad)-trailerSize)] = byte(rng.Uint32())
		}
		if rs := resign(bad); rs != nil {
			openAndReadAll(rs)
		}
	}
}

func FuzzOpen(f *testing.F) {
	data := smallSegment(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("SSEG\x01\x00\x00\x00"))
	f.Add(append([]byte("SSEG\x01\x00\x00\x00"), make([]byte, 24)...))
	empty, _ := writeSegment(f, allKindsSpec(0), nil)
	if b, err := os.ReadFile(empty); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		openAndReadAll(b)
		if rs := resign(b); rs != nil {
			openAndReadAll(rs)
		}
	})
}

// Damage that reaches a mapped file after its bytes were first read and
// checked (a write to the file, or a page read back from a failing disk)
// must not change what the segment answers: every read gives the intact
// values (from a verified copy) or an error wrapping ErrCorrupt. With the
// block cache off, every block read checks the mapping anew.
func TestDamageAfterFirstUseDetected(t *testing.T) {
	for _, budget := range []int64{DefaultBlockCacheBytes, 0} {
		t.Run(fmt.Sprintf("blockCache=%d", budget), func(t *testing.T) {
			SetBlockCacheBytes(budget)
			defer SetBlockCacheBytes(DefaultBlockCacheBytes)
			damageAfterFirstUse(t)
		})
	}
}

func damageAfterFirstUse(t *testing.T) {
	spec := allKindsSpec(16)
	spec.ColumnCompression = map[string]Compression{"s": CompressLZ4, "mv": CompressZstd, "l": CompressNone}
	rng := rand.New(rand.NewPCG(5, 5))
	rows := make([]Row, 40)
	for i := range rows {
		rows[i] = randRow(rng, int64(i)*1000)
	}
	path, info := writeSegment(t, spec, rows)
	seg := mustOpen(t, path)
	want, err := readAll(seg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	step := 1
	if testing.Short() || raceEnabled {
		step = 5
	}
	detected := 0
	var b [1]byte
	for off := int64(headerSize); off < info.Bytes-trailerSize; off += int64(step) {
		if _, err := f.ReadAt(b[:], off); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{b[0] ^ 0x5a}, off); err != nil {
			t.Fatal(err)
		}
		got, err := readAll(seg)
		switch {
		case err != nil && !errors.Is(err, ErrCorrupt):
			t.Fatalf("byte %d damaged after first use: error %v does not wrap ErrCorrupt", off, err)
		case err == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("byte %d damaged after first use: the segment answered changed values", off)
		case err != nil:
			detected++
		}
		if _, err := f.WriteAt(b[:], off); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := readAll(seg); err != nil {
		t.Fatalf("repaired file: %v", err)
	}
	if err := seg.Verify(); err != nil {
		t.Fatalf("repaired file: %v", err)
	}
	t.Logf("%d damaged bytes reported as errors", detected)
}
