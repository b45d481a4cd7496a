package audit

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// boltLog reads a stopped node's Raft log file read-only, in raft-boltdb's
// layout (bucket "logs": big-endian index keys, msgpack raft.Log values).
// Unlike raft-boltdb's GetLog, which opens a transaction and a decoder for
// every entry, a range is scanned in one transaction with one decoder:
// replays of a stopped node's log run about twice as fast.
type boltLog struct {
	db *bolt.DB
}

var bucketLogs = []byte("logs")

// errReadOnly answers the writes of raft.LogStore: a stopped node's log is
// only read.
var errReadOnly = errors.New("audit: a stopped node's log is opened read-only")

func (b *boltLog) edge(last bool) (uint64, error) {
	var out uint64
	err := b.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketLogs)
		if bk == nil {
			return nil
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

func (b *boltLog) FirstIndex() (uint64, error) { return b.edge(false) }
func (b *boltLog) LastIndex() (uint64, error)  { return b.edge(true) }

func (b *boltLog) GetLog(index uint64, l *raft.Log) error {
	found := false
	err := b.scanRange(index, index, func(e *raft.Log) error {
		*l, found = *e, true
		return nil
	})
	if err == nil && !found {
		return raft.ErrLogNotFound
	}
	return err
}

// scanRange calls fn with each entry from..to in order; a missing entry is
// an error. fn's *raft.Log is fresh each call.
func (b *boltLog) scanRange(from, to uint64, fn func(*raft.Log) error) error {
	return b.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketLogs)
		if bk == nil {
			return raft.ErrLogNotFound
		}
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], from)
		dec := codec.NewDecoderBytes(nil, &codec.MsgpackHandle{})
		want := from
		c := bk.Cursor()
		for k, v := c.Seek(key[:]); k != nil && want <= to; k, v = c.Next() {
			if len(k) != 8 || binary.BigEndian.Uint64(k) != want {
				return fmt.Errorf("live log entry %d: %w", want, raft.ErrLogNotFound)
			}
			l := new(raft.Log)
			dec.ResetBytes(v)
			if err := dec.Decode(l); err != nil {
				return fmt.Errorf("live log entry %d: %w", want, err)
			}
			if err := fn(l); err != nil {
				return err
			}
			want++
		}
		if want <= to {
			return fmt.Errorf("live log entry %d: %w", want, raft.ErrLogNotFound)
		}
		return nil
	})
}

func (b *boltLog) StoreLog(*raft.Log) error         { return errReadOnly }
func (b *boltLog) StoreLogs([]*raft.Log) error      { return errReadOnly }
func (b *boltLog) DeleteRange(uint64, uint64) error { return errReadOnly }

var _ raft.LogStore = (*boltLog)(nil)
