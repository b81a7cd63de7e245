package command

import (
	"sort"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// topMaxNamespaces bounds the namespaces top tracks.
const topMaxNamespaces = 10000

// topCounter is one time/count pair of top's output.
type topCounter struct {
	time  int64 // microseconds
	count int64
}

func (c *topCounter) add(d time.Duration) {
	c.time += d.Microseconds()
	c.count++
}

func (c topCounter) doc() bson.D {
	return bson.D{{Key: "time", Value: c.time}, {Key: "count", Value: c.count}}
}

// nsTop is top's usage record of one namespace.
type nsTop struct {
	total, readLock, writeLock                         topCounter
	queries, getmore, insert, update, remove, commands topCounter
}

// topStats is the per-namespace usage the top command reports. It is
// safe for concurrent use.
type topStats struct {
	mu sync.Mutex
	m  map[string]*nsTop
}

// record adds one command on an existing collection to top's figures.
func (e *Env) recordTop(r *Request, d time.Duration) {
	if _, ok := r.Body.Index(0).Value().StringValueOK(); !ok {
		return
	}
	ns := commandNS(r)
	if e.Store.Collection(ns) == nil {
		return
	}
	t := &e.top
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*nsTop{}
	}
	s := t.m[ns]
	if s == nil {
		if len(t.m) >= topMaxNamespaces {
			return
		}
		s = &nsTop{}
		t.m[ns] = s
	}
	s.total.add(d)
	switch r.Name {
	case "find":
		s.queries.add(d)
		s.readLock.add(d)
	case "getMore":
		s.getmore.add(d)
		s.readLock.add(d)
	case "insert":
		s.insert.add(d)
		s.writeLock.add(d)
	case "update", "findAndModify":
		s.update.add(d)
		s.writeLock.add(d)
	case "delete":
		s.remove.add(d)
		s.writeLock.add(d)
	default:
		s.commands.add(d)
		if writeConcernCommands[r.Name] {
			s.writeLock.add(d)
		} else {
			s.readLock.add(d)
		}
	}
}

// topTotals renders top's totals document.
func (e *Env) topTotals() bson.D {
	t := &e.top
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.m))
	for ns := range t.m {
		if e.Store.Collection(ns) == nil {
			delete(t.m, ns) // dropped
			continue
		}
		names = append(names, ns)
	}
	sort.Strings(names)
	d := bson.D{{Key: "note", Value: "all times in microseconds"}}
	for _, ns := range names {
		s := t.m[ns]
		d = append(d, bson.E{Key: ns, Value: bson.D{
			{Key: "total", Value: s.total.doc()},
			{Key: "readLock", Value: s.readLock.doc()},
			{Key: "writeLock", Value: s.writeLock.doc()},
			{Key: "queries", Value: s.queries.doc()},
			{Key: "getmore", Value: s.getmore.doc()},
			{Key: "insert", Value: s.insert.doc()},
			{Key: "update", Value: s.update.doc()},
			{Key: "remove", Value: s.remove.doc()},
			{Key: "commands", Value: s.commands.doc()},
		}})
	}
	return d
}
