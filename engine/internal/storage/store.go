package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// CacheSize is the block cache size in bytes; zero means
	// DefaultCacheSize. Memtables are sized from it (see tune).
	CacheSize int64

	// DiskReserve is the free space below which writes are refused with
	// OutOfDiskSpace; zero means DefaultDiskReserve (diskfull.go).
	DiskReserve int64
	// FS replaces the operating system's file system under Dir (fault
	// injection in tests); nil means the real one.
	FS vfs.FS
	// OplogSize caps local.oplog.rs in bytes; zero means the default
	// (DefaultOplogSize in memory, DefaultDiskOplogSize on disk).
	OplogSize int64
	// OplogMinRetention keeps oplog entries at least this long, even past
	// OplogSize (mongod's storage.oplogMinRetentionHours); zero keeps
	// none past the size cap.
	OplogMinRetention time.Duration

	// fs replaces the operating system's file system under Dir (tests).
	fs vfs.FS
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db      *pebble.DB
	durable bool

	wmu        sync.Mutex       // serialises writers (I2)
	lastRID    map[uint64]int64 // collection id → highest record id; guarded by wmu
	nextCollID uint64           // guarded by wmu
	txns       txnTable         // documents held by open transactions; guarded by wmu

	// cat is the published catalog, ns → collection. A published map is
	// never modified: writers (holding wmu) publish a changed copy, so
	// readers load it without a lock (I7).
	cat atomic.Pointer[map[string]*Collection]

	oplog oplogState // local.oplog.rs (oplog.go)

	closed atomic.Bool
	// disk refuses writes on a full disk; nil in memory (diskfull.go).
	disk *diskGuard
	// builds are the index builds in progress by collection id, which
	// writers record their writes for (indexbuild.go); buildCount lets
	// writers skip buildsMu when there is none.
	buildsMu   sync.Mutex
	builds     map[uint64][]*IndexBuild
	buildCount atomic.Int64
	// openBuilds are the builds whose snapshot is open (guarded by
	// buildsMu): Close releases them.
	openBuilds map[*IndexBuild]struct{}
	// buildRun is held shared by index builds while they read their
	// snapshots outside wmu; Close takes it exclusively, so it never
	// closes Pebble under a build's iterator (indexbuild.go).
	buildRun sync.RWMutex
	// cacheSize is the block cache's capacity (CacheStats).
	cacheSize int64
	// syncing counts commits that left wmu and wait for their WAL sync
	// (I3); Close waits for them.
	syncing sync.WaitGroup
	// wal counts the write-ahead log's syncs (walFS), and commits the
	// durable writes that waited for one.
	wal     *walStats
	commits atomic.Int64
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
	tune(po, opts.CacheSize, opts.Dir != "")
	wal := &walStats{}
	dir := opts.Dir
	switch {
	case dir == "":
		po.FS = newTableFS()
		dir = "mem"
	case opts.fs != nil:
		po.FS = opts.fs
	case opts.FS != nil:
		po.FS = opts.FS
	default:
		po.FS = walFS{FS: vfs.Default, stats: wal}
	}
	var guard *diskGuard
	if opts.Dir != "" {
		guard = newDiskGuard(diskFS(po.FS), dir, opts.DiskReserve, opts.Logger)
		guard.listen(po)
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", opts.Dir, err)
	}
	s := &Store{db: db, durable: opts.Dir != "", lastRID: map[uint64]int64{}, nextCollID: 1, disk: guard, cacheSize: po.CacheSize, wal: wal}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.openOplog(opts.OplogSize); err != nil {
		db.Close()
		return nil, err
	}
	s.oplog.ret.keep.Store(int64(opts.OplogMinRetention))
	return s, nil
}

// Close flushes and closes the store. Snapshots and iterators must be
// closed first. Writes in progress finish first; later ones get ErrClosed.
func (s *Store) Close() error {
	s.stopOplog()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	s.buildRun.Lock() // builds see closed and stop within a few hundred documents
	defer s.buildRun.Unlock()
	s.closeBuilds()
	s.syncing.Wait()
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
	colls := map[string]*Collection{}
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
		colls[c.NS] = c
	}
	s.cat.Store(&colls)
	if err := it.Error(); err != nil {
		return err
	}
	return s.dropOrphanEntries(colls)
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

// catalog returns the published catalog. The map must not be modified.
func (s *Store) catalog() map[string]*Collection { return *s.cat.Load() }

// publish makes changes (ns → new definition, nil when dropped) visible
// to readers by replacing the catalog with a changed copy. The caller
// holds wmu, so publishers never race.
func (s *Store) publish(changes map[string]*Collection) {
	old := s.catalog()
	next := make(map[string]*Collection, len(old)+len(changes))
	for ns, c := range old {
		next[ns] = c
	}
	for ns, c := range changes {
		if c == nil {
			delete(next, ns)
		} else {
			next[ns] = c
		}
	}
	s.cat.Store(&next)
}

// Collection returns the collection named ns ("db.coll"), or nil. It
// takes no lock.
func (s *Store) Collection(ns string) *Collection {
	return s.catalog()[ns]
}

// Collections returns the collections of database db sorted by name, or of
// every database when db is empty.
func (s *Store) Collections(db string) []*Collection {
	var out []*Collection
	for _, c := range s.catalog() {
		if db == "" || c.DB == db {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NS < out[j].NS })
	return out
}

// Databases returns the names of databases that hold at least one
// collection, sorted.
func (s *Store) Databases() []string {
	seen := map[string]bool{}
	for _, c := range s.catalog() {
		seen[c.DB] = true
	}
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

// indexPrefixLen is the length of indexPrefix's keys.
const indexPrefixLen = 13

// appendRecordKey appends recordKey(collID, rid) to dst.
func appendRecordKey(dst []byte, collID uint64, rid int64) []byte {
	dst = append(dst, prefixRecord)
	dst = binary.BigEndian.AppendUint64(dst, collID)
	return binary.BigEndian.AppendUint64(dst, uint64(rid))
}

// appendIndexPrefix appends indexPrefix(collID, indexID) to dst.
func appendIndexPrefix(dst []byte, collID uint64, indexID uint32) []byte {
	dst = append(dst, prefixIndex)
	dst = binary.BigEndian.AppendUint64(dst, collID)
	return binary.BigEndian.AppendUint32(dst, indexID)
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
