package fsm

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"strata/commands"
)

// Snapshot format (version 1): a sequence of frames, each a uvarint length
// followed by that many bytes:
//
//	{"format":"strata-fsm","version":1,"index":N,"lastTime":T}   JSON
//	{"table":"<name>","records":K}      once per table, in the fixed order of `tables`
//	<record> × K                        in a deterministic order; JSON, or the
//	                                    table's own binary encoding (segments)
//	{"table":""}                         end marker: a snapshot cut short anywhere
//	                                    fails to restore instead of losing tables
//
// JSON records are encoded with encoding/json (struct fields in declaration
// order, map keys sorted), so the same state always yields the same bytes.
const (
	snapshotFormat  = "strata-fsm"
	snapshotVersion = 1
)

// table is one part of State with its own snapshot and restore: freeze captures
// a point-in-time view under the FSM lock (it must be cheap); the returned
// function writes it out later, concurrently with Apply.
type table struct {
	name    string
	freeze  func(s *State) (records int, write func(w *recordWriter) error)
	restore func(s *State, r *recordReader, records int) error
}

var tables = []table{
	{
		name: "coordinator_config",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			if s.coordinatorConfig == nil {
				return 0, func(*recordWriter) error { return nil }
			}
			c := *s.coordinatorConfig
			return 1, func(w *recordWriter) error { return w.write(c) }
		},
		restore: func(s *State, r *recordReader, n int) error {
			if n == 0 {
				return nil
			}
			var c commands.CoordinatorDynamicConfig
			if err := r.read(&c); err != nil {
				return err
			}
			s.coordinatorConfig = &c
			return nil
		},
	},
	{
		name: "worker_config",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			if s.workerConfig == nil {
				return 0, func(*recordWriter) error { return nil }
			}
			c := *s.workerConfig
			return 1, func(w *recordWriter) error { return w.write(c) }
		},
		restore: func(s *State, r *recordReader, n int) error {
			if n == 0 {
				return nil
			}
			var c commands.WorkerBehaviorConfig
			if err := r.read(&c); err != nil {
				return err
			}
			s.workerConfig = &c
			return nil
		},
	},
	{
		name: "audit",
		freeze: func(s *State) (int, func(*recordWriter) error) {
			entries := s.audit.entries[:len(s.audit.entries):len(s.audit.entries)]
			return len(entries), func(w *recordWriter) error {
				for i := range entries {
					if err := w.write(&entries[i]); err != nil {
						return err
					}
				}
				return nil
			}
		},
		restore: func(s *State, r *recordReader, n int) error {
			s.audit.entries = make([]AuditEntry, n)
			for i := 0; i < n; i++ {
				if err := r.read(&s.audit.entries[i]); err != nil {
					return err
				}
			}
			s.audit.rebuildIndex()
			return nil
		},
	},
}

type snapshotHeader struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Index      uint64 `json:"index"`
	LastTimeMs int64  `json:"lastTime"`
}

type tableHeader struct {
	Table   string `json:"table"`
	Records int    `json:"records"`
}

// frozen is a point-in-time snapshot ready to be written.
type frozen struct {
	header snapshotHeader
	parts  []frozenTable
}

type frozenTable struct {
	name    string
	records int
	write   func(w *recordWriter) error
}

func (s *State) freeze() *frozen {
	f := &frozen{header: snapshotHeader{Format: snapshotFormat, Version: snapshotVersion, Index: s.index, LastTimeMs: s.lastTimeMs}}
	for _, t := range tables {
		n, w := t.freeze(s)
		f.parts = append(f.parts, frozenTable{name: t.name, records: n, write: w})
	}
	return f
}

// WriteTo writes the snapshot bytes.
func (f *frozen) WriteTo(out io.Writer) (int64, error) {
	cw := &countingWriter{w: out}
	w := &recordWriter{bw: bufio.NewWriterSize(cw, 1<<16)}
	if err := w.write(f.header); err != nil {
		return cw.n, err
	}
	for _, p := range f.parts {
		if err := w.write(tableHeader{Table: p.name, Records: p.records}); err != nil {
			return cw.n, err
		}
		if err := p.write(w); err != nil {
			return cw.n, fmt.Errorf("snapshot table %s: %w", p.name, err)
		}
	}
	if err := w.write(tableHeader{}); err != nil {
		return cw.n, err
	}
	err := w.bw.Flush()
	return cw.n, err
}

// WriteSnapshot writes the state's snapshot bytes (the format above): what a
// snapshot of this state persists, and what replay tools digest.
func (s *State) WriteSnapshot(w io.Writer) (int64, error) { return s.freeze().WriteTo(w) }

// Persist implements raft.FSMSnapshot.
func (f *frozen) Persist(sink raft.SnapshotSink) error {
	if _, err := f.WriteTo(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (f *frozen) Release() {}

func readSnapshot(rd io.Reader) (*State, error) {
	r := &recordReader{br: bufio.NewReaderSize(rd, 1<<16)}
	var h snapshotHeader
	if err := r.read(&h); err != nil {
		return nil, fmt.Errorf("snapshot header: %w", err)
	}
	if h.Format != snapshotFormat || h.Version < 1 || h.Version > snapshotVersion {
		return nil, fmt.Errorf("unsupported snapshot %q version %d", h.Format, h.Version)
	}
	s := newState()
	s.index, s.lastTimeMs = h.Index, h.LastTimeMs
	byName := map[string]table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	for {
		var th tableHeader
		if err := r.read(&th); err != nil {
			if err == io.EOF {
				err = fmt.Errorf("snapshot ends without its end marker: %w", io.ErrUnexpectedEOF)
			}
			return nil, fmt.Errorf("snapshot table header: %w", err)
		}
		if th.Table == "" {
			break
		}
		t, ok := byName[th.Table]
		if !ok {
			return nil, fmt.Errorf("snapshot has unknown table %q (written by a newer version?)", th.Table)
		}
		if th.Records < 0 {
			return nil, fmt.Errorf("snapshot table %s: negative record count", th.Table)
		}
		if err := t.restore(s, r, th.Records); err != nil {
			return nil, fmt.Errorf("snapshot table %s: %w", th.Table, err)
		}
	}
	return s, nil
}

type recordWriter struct {
	bw  *bufio.Writer
	hdr [binary.MaxVarintLen64]byte
}

// write writes v as one JSON frame.
func (w *recordWriter) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.writeRaw(b)
}

// writeRaw writes one frame of raw bytes.
func (w *recordWriter) writeRaw(b []byte) error {
	n := binary.PutUvarint(w.hdr[:], uint64(len(b)))
	if _, err := w.bw.Write(w.hdr[:n]); err != nil {
		return err
	}
	_, err := w.bw.Write(b)
	return err
}

// maxFrame bounds one record so that a corrupt length cannot allocate wildly.
const maxFrame = 256 << 20

type recordReader struct {
	br  *bufio.Reader
	buf []byte
}

// readRaw returns the next frame; the slice is valid until the next call.
func (r *recordReader) readRaw() ([]byte, error) {
	n, err := binary.ReadUvarint(r.br)
	if err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("frame length: %w", err)
	}
	if n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes exceeds the %d limit (corrupt snapshot?)", n, maxFrame)
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.br, r.buf); err != nil {
		return nil, fmt.Errorf("truncated frame: %w", io.ErrUnexpectedEOF)
	}
	return r.buf, nil
}

// read decodes the next JSON frame into v.
func (r *recordReader) read(v any) error {
	b, err := r.readRaw()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
