package encoding

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec is the general-purpose compression applied to an encoded block.
type Codec byte

// Codecs. The numeric values are part of the file format.
const (
	CodecNone Codec = 0
	CodecLZ4  Codec = 1 // LZ4 block format, no frame
	CodecZstd Codec = 2 // one zstd frame
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", byte(c))
}

// Valid reports whether c is a known codec.
func (c Codec) Valid() bool { return c <= CodecZstd }

// MaxRawBlock bounds the decompressed size of a block a reader accepts.
const MaxRawBlock = 1 << 30

var (
	lz4Pool = sync.Pool{New: func() any { return new(lz4.Compressor) }}

	zstdEncOnce sync.Once
	zstdEnc     *zstd.Encoder
	zstdDecOnce sync.Once
	zstdDec     *zstd.Decoder
)

func zstdEncoder() *zstd.Encoder {
	zstdEncOnce.Do(func() {
		// Errors are impossible with these constant options.
		zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
	})
	return zstdEnc
}

func zstdDecoder() *zstd.Decoder {
	zstdDecOnce.Do(func() {
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(MaxRawBlock))
	})
	return zstdDec
}

// Compress appends src compressed with c to dst.
func Compress(c Codec, dst, src []byte) ([]byte, error) {
	switch c {
	case CodecNone:
		return append(dst, src...), nil
	case CodecLZ4:
		start := len(dst)
		dst = grow(dst, lz4.CompressBlockBound(len(src)))
		out := dst[start : start+lz4.CompressBlockBound(len(src))]
		comp := lz4Pool.Get().(*lz4.Compressor)
		n, err := comp.CompressBlock(src, out)
		lz4Pool.Put(comp)
		if err != nil {
			return dst[:start], err
		}
		if n == 0 && len(src) > 0 {
			return dst[:start], fmt.Errorf("encoding: lz4 produced no output")
		}
		return dst[:start+n], nil
	case CodecZstd:
		return zstdEncoder().EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("encoding: unknown codec %d", byte(c))
}

// Decompress decompresses src, which must expand to exactly rawLen bytes,
// into dst (resized and returned). For CodecNone it returns src itself.
func Decompress(c Codec, dst, src []byte, rawLen int) ([]byte, error) {
	if rawLen < 0 || rawLen > MaxRawBlock {
		return dst, corrupt("raw block length out of range")
	}
	switch c {
	case CodecNone:
		if len(src) != rawLen {
			return dst, corrupt("stored length mismatch")
		}
		return src, nil
	case CodecLZ4:
		if cap(dst) < rawLen {
			dst = make([]byte, rawLen)
		}
		dst = dst[:rawLen]
		if rawLen == 0 {
			if len(src) > 1 {
				return dst, corrupt("lz4 block too long")
			}
			return dst, nil
		}
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			return dst, corrupt("lz4: " + err.Error())
		}
		if n != rawLen {
			return dst, corrupt("lz4 length mismatch")
		}
		return dst, nil
	case CodecZstd:
		out, err := zstdDecoder().DecodeAll(src, dst[:0])
		if err != nil {
			return dst, corrupt("zstd: " + err.Error())
		}
		if len(out) != rawLen {
			return out, corrupt("zstd length mismatch")
		}
		return out, nil
	}
	return dst, corrupt("unknown codec")
}

// ChooseCodec picks a codec for a column from a sample block. Blocks are
// already bit-packed, and reading packed bits in place is several times
// faster than LZ4, itself several times faster than zstd. So LZ4 is used
// only when it saves a quarter of the bytes, and zstd only when it saves
// 40% and clearly beats LZ4 (sorted timestamps, skewed low-cardinality
// values).
func ChooseCodec(sample []byte) Codec {
	if len(sample) < 64 {
		return CodecNone
	}
	l, _ := Compress(CodecLZ4, nil, sample)
	z, _ := Compress(CodecZstd, nil, sample)
	raw, lz, zs := float64(len(sample)), float64(len(l)), float64(len(z))
	switch {
	case zs <= 0.6*raw && zs <= 0.85*lz:
		return CodecZstd
	case lz <= 0.75*raw:
		return CodecLZ4
	}
	return CodecNone
}
