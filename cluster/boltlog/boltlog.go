// Package boltlog is a control node's Raft log and stable store: one bbolt
// file in raft-boltdb v2's layout (bucket "logs": big-endian index keys,
// msgpack raft.Log values; bucket "conf": the stable store), so existing
// data directories and tools read it unchanged. Raft reads and writes it
// exactly as it would raft-boltdb's store. What it adds is Scan, the read
// path of audit replays: raft-boltdb's GetLog opens a read transaction and
// builds a msgpack decoder for every entry, which made replaying a running
// node's log cost twice what a stopped node's did; Scan reads a range in
// one transaction with one decoder.
package boltlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketLogs = []byte("logs")
	bucketConf = []byte("conf")
)

// ErrKeyNotFound is Get's answer for a key never set. Raft tells a fresh
// stable store by this error's text, "not found" (raft-boltdb's too).
var ErrKeyNotFound = errors.New("not found")

// Store is the log and stable store.
type Store struct {
	db *bolt.DB
}

// Open opens (or creates) the store at path. With opts.ReadOnly the
// buckets are not created (a stopped node's file, read by tools).
func Open(path string, opts *bolt.Options, noSync bool) (*Store, error) {
	db, err := bolt.Open(path, 0o600, opts)
	if err != nil {
		return nil, err
	}
	db.NoSync = noSync
	if opts == nil || !opts.ReadOnly {
		err := db.Update(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucketIfNotExists(bucketLogs); err != nil {
				return err
			}
			_, err := tx.CreateBucketIfNotExists(bucketConf)
			return err
		})
		if err != nil {
			db.Close()
			return nil, err
		}
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) edge(last bool) (uint64, error) {
	var out uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketLogs)
		if bk == nil {
			return nil // a read-only file of a node that never started
		}
		c := bk.Cursor()
		k, _ := c.First()
		if last {
			k, _ = c.Last()
		}
		if len(k) == 8 {
			out = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return out, err
}

// FirstIndex is the oldest index held (0: none).
func (s *Store) FirstIndex() (uint64, error) { return s.edge(false) }

// LastIndex is the newest index held (0: none).
func (s *Store) LastIndex() (uint64, error) { return s.edge(true) }

// GetLog reads one entry, as raft-boltdb does.
func (s *Store) GetLog(index uint64, l *raft.Log) error {
	return s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketLogs)
		if bk == nil {
			return raft.ErrLogNotFound
		}
		v := bk.Get(key(index))
		if v == nil {
			return raft.ErrLogNotFound
		}
		return codec.NewDecoderBytes(v, &codec.MsgpackHandle{}).Decode(l)
	})
}

// Scan calls fn with each entry from..to in order; a missing entry is
// raft.ErrLogNotFound. fn's *raft.Log is fresh each call and owns its
// slices (they are copied out of the file). Entries are read scanBatch at a
// time, each batch in one read transaction with one decoder, and fn runs
// outside the transaction: a long replay never holds a read transaction
// open for long, which would keep a Raft append that grows the file
// waiting for bbolt's remap.
func (s *Store) Scan(from, to uint64, fn func(*raft.Log) error) error {
	dec := codec.NewDecoderBytes(nil, &codec.MsgpackHandle{})
	batch := make([]*raft.Log, 0, scanBatch)
	for next := from; next <= to; {
		last := min(to, next+scanBatch-1)
		batch = batch[:0]
		err := s.db.View(func(tx *bolt.Tx) error {
			bk := tx.Bucket(bucketLogs)
			if bk == nil {
				return fmt.Errorf("log entry %d: %w", next, raft.ErrLogNotFound)
			}
			want := next
			c := bk.Cursor()
			for k, v := c.Seek(key(next)); k != nil && want <= last; k, v = c.Next() {
				if len(k) != 8 || binary.BigEndian.Uint64(k) != want {
					break
				}
				l := new(raft.Log)
				dec.ResetBytes(v)
				if err := dec.Decode(l); err != nil {
					return fmt.Errorf("log entry %d: %w", want, err)
				}
				batch = append(batch, l)
				want++
			}
			if want <= last {
				return fmt.Errorf("log entry %d: %w", want, raft.ErrLogNotFound)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, l := range batch {
			if err := fn(l); err != nil {
				return err
			}
		}
		if last == to {
			break // to may be the largest index
		}
		next = last + 1
	}
	return nil
}

// scanBatch is how many entries Scan reads per read transaction.
const scanBatch = 1024

// StoreLog stores one entry.
func (s *Store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs stores entries in one transaction, encoded as raft-boltdb
// encodes them (msgpack, times in go-msgpack's older extension format).
func (s *Store) StoreLogs(logs []*raft.Log) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketLogs)
		h := &codec.MsgpackHandle{BasicHandle: codec.BasicHandle{TimeNotBuiltin: true}}
		for _, l := range logs {
			var buf bytes.Buffer
			if err := codec.NewEncoder(&buf, h).Encode(l); err != nil {
				return err
			}
			if err := bk.Put(key(l.Index), buf.Bytes()); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteRange deletes the entries min..max (inclusive).
func (s *Store) DeleteRange(min, max uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		for k, _ := c.Seek(key(min)); k != nil && binary.BigEndian.Uint64(k) <= max; k, _ = c.Next() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Set stores a stable-store value.
func (s *Store) Set(k, v []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketConf).Put(k, v) })
}

// Get reads a stable-store value (ErrKeyNotFound when never set).
func (s *Store) Get(k []byte) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketConf)
		if bk == nil {
			return ErrKeyNotFound
		}
		v := bk.Get(k)
		if v == nil {
			return ErrKeyNotFound
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// SetUint64 stores a stable-store number (8 bytes, big-endian).
func (s *Store) SetUint64(k []byte, v uint64) error { return s.Set(k, key(v)) }

// GetUint64 reads a stable-store number.
func (s *Store) GetUint64(k []byte) (uint64, error) {
	v, err := s.Get(k)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("stable store value of %q: %d bytes, want 8", k, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func key(i uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], i)
	return b[:]
}

var (
	_ raft.LogStore    = (*Store)(nil)
	_ raft.StableStore = (*Store)(nil)
)
