package command

import (
	"fmt"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// indexUser is a source that reads through indexes: its plan's winning
// indexes, by name.
type indexUser interface {
	indexesUsed() []string
}

func (p *planRows) indexesUsed() []string { return p.x.IndexesUsed() }

func (d *docSource) indexesUsed() []string {
	if u, ok := d.rows.(indexUser); ok {
		return u.indexesUsed()
	}
	return nil
}

// readSet is what a cursor over a collection depends on: the collection
// (by catalog id, which a rename keeps) and the indexes its plan scans.
// mongod kills such a cursor when one of them goes away; the next getMore
// answers QueryPlanKilled.
type readSet struct {
	collID  uint64
	uuid    [16]byte
	indexes []storage.Index // name and id of each index scanned
}

// bindReadSet records what c reads when ns names a collection; cursors
// over anything else (a view, $cmd.listIndexes) depend on nothing.
func bindReadSet(s *storage.Store, c *Cursor, ns string, src source) {
	coll := s.Collection(ns)
	if coll == nil {
		return
	}
	rs := &readSet{collID: coll.ID, uuid: coll.UUID}
	if u, ok := src.(indexUser); ok {
		for _, name := range u.indexesUsed() {
			if ix := coll.IndexByName(name); ix != nil {
				rs.indexes = append(rs.indexes, storage.Index{ID: ix.ID, Name: ix.Name})
			}
		}
	}
	c.reads = rs
}

// killedBy reports why c can no longer run (QueryPlanKilled, with mongod's
// reasons: the collection dropped or renamed, an index it scans dropped),
// or nil.
func (rs *readSet) killedBy(s *storage.Store, ns string) error {
	if rs == nil {
		return nil
	}
	coll := s.Collection(ns)
	if coll == nil || coll.ID != rs.collID {
		if to := findByID(s, rs.collID); to != "" {
			return mongoerr.Newf(mongoerr.QueryPlanKilled, "collection renamed from '%s' to '%s'. UUID %s", ns, to, uuidString(rs.uuid))
		}
		return mongoerr.Newf(mongoerr.QueryPlanKilled, "collection dropped. UUID %s", uuidString(rs.uuid))
	}
	for _, want := range rs.indexes {
		if ix := coll.IndexByName(want.Name); ix == nil || ix.ID != want.ID {
			return mongoerr.Newf(mongoerr.QueryPlanKilled, "index '%s' dropped", want.Name)
		}
	}
	return nil
}

// findByID returns the namespace of the collection with catalog id id, or
// "" when there is none.
func findByID(s *storage.Store, id uint64) string {
	for _, db := range s.Databases() {
		for _, c := range s.Collections(db) {
			if c.ID == id {
				return c.NS
			}
		}
	}
	return ""
}

// uuidString formats a collection UUID as mongod prints it.
func uuidString(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
