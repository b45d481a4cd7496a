package fsm

import (
	"fmt"
	"slices"
	"strings"

	"strata/commands"
)

// serversTable is the discovery membership: the processes that announced
// themselves and have not left, by id. Records are replaced, never changed
// in place.
type serversTable struct {
	byID map[string]*ServerRecord
}

// ServerRecord is one member. JoinedMs is the leader time of its (last) join.
type ServerRecord struct {
	commands.JoinServer
	JoinedMs int64 `json:"joinedMs"`
}

func validateServer(c commands.JoinServer) error {
	switch {
	case c.ID == "" || len(c.ID) > commands.MaxTaskIDLength:
		return Invalid("server id must be 1..%d bytes", commands.MaxTaskIDLength)
	case c.URL == "" || len(c.URL) > 2048:
		return Invalid("server %q: url must be 1..2048 bytes", c.ID)
	case len(c.Roles) == 0 || len(c.Roles) > 16:
		return Invalid("server %q: 1..16 roles", c.ID)
	case c.Capacity < 0 || c.MaxSize < 0:
		return Invalid("server %q: negative capacity or size", c.ID)
	}
	return nil
}

func applyJoinServer(s *State, m Meta, c commands.JoinServer) (any, error) {
	if err := validateServer(c); err != nil {
		return nil, err
	}
	if s.servers.byID == nil {
		s.servers.byID = map[string]*ServerRecord{}
	}
	c.Roles = slices.Clone(c.Roles)
	s.servers.byID[c.ID] = &ServerRecord{JoinServer: c, JoinedMs: m.TimeMs}
	return nil, nil
}

func applyLeaveServer(s *State, _ Meta, c commands.LeaveServer) (any, error) {
	if _, ok := s.servers.byID[c.ID]; !ok {
		return nil, NotFound("server %q is not a member", c.ID)
	}
	delete(s.servers.byID, c.ID)
	return nil, nil
}

// Servers returns the members sorted by id.
func (s *State) Servers() []*ServerRecord {
	out := make([]*ServerRecord, 0, len(s.servers.byID))
	for _, r := range s.servers.byID {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *ServerRecord) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Server returns one member.
func (s *State) Server(id string) (*ServerRecord, bool) {
	r, ok := s.servers.byID[id]
	return r, ok
}

var serversSnapshotTable = table{
	name: "servers",
	freeze: func(s *State) (int, func(*recordWriter) error) {
		recs := make([]*ServerRecord, 0, len(s.servers.byID))
		for _, r := range s.servers.byID {
			recs = append(recs, r)
		}
		return len(recs), func(w *recordWriter) error {
			slices.SortFunc(recs, func(a, b *ServerRecord) int { return strings.Compare(a.ID, b.ID) })
			for _, r := range recs {
				if err := w.write(r); err != nil {
					return err
				}
			}
			return nil
		}
	},
	restore: func(s *State, r *recordReader, n int) error {
		s.servers.byID = make(map[string]*ServerRecord, n)
		for i := 0; i < n; i++ {
			var rec ServerRecord
			if err := r.read(&rec); err != nil {
				return err
			}
			if err := validateServer(rec.JoinServer); err != nil {
				return fmt.Errorf("server record: %w", err)
			}
			if _, dup := s.servers.byID[rec.ID]; dup {
				return fmt.Errorf("server %q is duplicated", rec.ID)
			}
			s.servers.byID[rec.ID] = &rec
		}
		return nil
	},
}

func init() {
	on(applyJoinServer)
	on(applyLeaveServer)
	tables = append(tables, serversSnapshotTable)
}
