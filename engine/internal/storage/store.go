package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Key prefixes; see the package documentation.
const (
	prefixCatalog = 'c'
	prefixMeta    = 'm'
	prefixRecord  = 'r'
	prefixIndex   = 'i'
)

// ErrClosed is returned by operations on a closed Store.
var ErrClosed = errors.New("storage: closed")

// Options configure Open.
type Options struct {
	// Dir is the directory of the database files; empty means in memory.
	Dir string
	// Logger receives Pebble's messages at debug level; nil discards them.
	Logger *slog.Logger
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db      *pebble.DB
	durable bool

	wmu     sync.Mutex       // serialises writers (I2)
	lastRID map[uint64]int64 // collection id → highest record id; guarded by wmu

	cmu        sync.RWMutex // guards colls and nextCollID
	colls      map[string]*Collection
	nextCollID uint64
	closed     bool
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l != nil {
		p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	if p.l != nil {
		p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// Open opens or creates the store described by opts and loads its catalog.
func Open(opts Options) (*Store, error) {
	po := &pebble.Options{Logger: pebbleLogger{opts.Logger}}
	dir := opts.Dir
	if dir == "" {
		po.FS = vfs.NewMem()
		dir = "mem"
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", opts.Dir, err)
	}
	s := &Store{db: db, durable: opts.Dir != "", lastRID: map[uint64]int64{}, colls: map[string]*Collection{}, nextCollID: 1}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close flushes and closes the store. Snapshots and iterators must be
// closed first.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.cmu.Lock()
	if s.closed {
		s.cmu.Unlock()
		return nil
	}
	s.closed = true
	s.cmu.Unlock()
	return s.db.Close()
}

// Durable reports whether the store is on disk.
func (s *Store) Durable() bool { return s.durable }

func (s *Store) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixCatalog}, UpperBound: []byte{prefixCatalog + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		c, err := decodeCollection(it.Value())
		if err != nil {
			return fmt.Errorf("storage: catalog entry %q: %w", it.Key()[1:], err)
		}
		if c.ID >= s.nextCollID {
			s.nextCollID = c.ID + 1
		}
		rid, err := s.lastRecordID(c.ID)
		if err != nil {
			return err
		}
		s.lastRID[c.ID] = rid
		s.colls[c.NS] = c
	}
	return it.Error()
}

func (s *Store) lastRecordID(collID uint64) (int64, error) {
	lo := recordPrefix(collID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if it.Last() {
		return int64(binary.BigEndian.Uint64(it.Key()[9:])), nil
	}
	return 0, it.Error()
}

// Collection returns the collection named ns ("db.coll"), or nil.
func (s *Store) Collection(ns string) *Collection {
	s.cmu.RLock()
	defer s.cmu.RUnlock()
	return s.colls[ns]
}

// Collections returns the collections of database db sorted by name, or of
// every database when db is empty.
func (s *Store) Collections(db string) []*Collection {
	s.cmu.RLock()
	var out []*Collection
	for _, c := range s.colls {
		if db == "" || c.DB == db {
			out = append(out, c)
		}
	}
	s.cmu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].NS < out[j].NS })
	return out
}

// Databases returns the names of databases that hold at least one
// collection, sorted.
func (s *Store) Databases() []string {
	s.cmu.RLock()
	seen := map[string]bool{}
	for _, c := range s.colls {
		seen[c.DB] = true
	}
	s.cmu.RUnlock()
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// SplitNS splits "db.coll" at the first dot.
func SplitNS(ns string) (db, coll string) {
	db, coll, _ = strings.Cut(ns, ".")
	return db, coll
}

func recordPrefix(collID uint64) []byte {
	k := make([]byte, 9, 17)
	k[0] = prefixRecord
	binary.BigEndian.PutUint64(k[1:], collID)
	return k
}

func recordKey(collID uint64, rid int64) []byte {
	k := recordPrefix(collID)
	return binary.BigEndian.AppendUint64(k, uint64(rid))
}

func indexPrefix(collID uint64, indexID uint32) []byte {
	k := make([]byte, 13, 64)
	k[0] = prefixIndex
	binary.BigEndian.PutUint64(k[1:], collID)
	binary.BigEndian.PutUint32(k[9:], indexID)
	return k
}

func collIndexPrefix(collID uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefixIndex
	binary.BigEndian.PutUint64(k[1:], collID)
	return k
}

func catalogKey(ns string) []byte { return append([]byte{prefixCatalog}, ns...) }

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func rawCopy(b []byte) bson.Raw { return bson.Raw(append([]byte(nil), b...)) }
