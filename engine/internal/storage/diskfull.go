package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// DefaultDiskReserve is the free space below which an on-disk store
// refuses writes (Options.DiskReserve when zero): room for a memtable's
// WAL, its flush and a compaction's output, so that Pebble never meets
// ENOSPC in the write-ahead log.
const DefaultDiskReserve = 128 << 20

// diskProbeEvery is how long one free-space probe stays valid.
const diskProbeEvery = 50 * time.Millisecond

// diskLogEvery is the shortest interval between two log lines about a
// full disk; the lines in between are counted and reported with the next.
const diskLogEvery = 10 * time.Second

// diskGuard keeps writes off a full disk.
//
// Pebble cannot recover from a failed write-ahead log write: the next
// commit or WAL rotation panics inside Pebble while it holds its mutex,
// which would leave every later reader and writer waiting forever. A
// failed memtable flush, on the other hand, is retried by Pebble in a
// loop until it succeeds, while writers fill the remaining memtables and
// then stall without an error. So the guard answers writes with
// OutOfDiskSpace before Pebble is reached:
//
//   - a free-space probe (the file system's statistics for the data
//     directory, at most every diskProbeEvery) refuses writes while less
//     than the reserve is free, and admits them again once space returns;
//   - a background error that is ENOSPC (a flush or compaction that could
//     not write its tables) refuses writes until a flush succeeds;
//   - a commit or WAL sync that failed with ENOSPC leaves the store
//     read-only until it is reopened (Pebble's WAL is unusable then).
//
// Reads never consult the guard. It is safe for concurrent use: the write
// path reads atomics only.
type diskGuard struct {
	fs      vfs.FS
	dir     string
	reserve uint64
	log     *slog.Logger

	probedAt  atomic.Int64 // unix nanoseconds of the last probe
	lowSpace  atomic.Bool  // the last probe found less than the reserve free
	bgFull    atomic.Bool  // a background write met ENOSPC; cleared by a flush
	walBroken atomic.Bool  // a WAL write met ENOSPC: read-only until reopen
	avail     atomic.Uint64

	logMu      sync.Mutex
	loggedAt   time.Time
	suppressed int
}

// ErrDiskFull is the error a refused write returns; the command layer
// receives it as OutOfDiskSpace (14031).
//
// Divergence: mongod answers OutOfDiskSpace when WiredTiger meets ENOSPC;
// formwork refuses writes earlier, once free space falls under the
// reserve (DefaultDiskReserve), because Pebble cannot survive a failed WAL
// write (TestDiskFullRefusesWrites in package engine).
var ErrDiskFull = mongoerr.New(mongoerr.OutOfDiskSpace, "Insufficient free space on the data directory's disk: writes are refused until space is freed")

// errWALBroken is the error once a WAL write has failed for lack of space.
var errWALBroken = mongoerr.New(mongoerr.OutOfDiskSpace, "A write-ahead log write failed for lack of disk space: the database is read-only until it is restarted with free space")

// newDiskGuard returns the guard of a store on fs under dir; reserve zero
// means DefaultDiskReserve.
func newDiskGuard(fs vfs.FS, dir string, reserve int64, log *slog.Logger) *diskGuard {
	if reserve <= 0 {
		reserve = DefaultDiskReserve
	}
	return &diskGuard{fs: fs, dir: dir, reserve: uint64(reserve), log: log}
}

// admit returns nil when a write may go ahead, or an OutOfDiskSpace error.
// A nil guard (an in-memory store) admits everything.
func (g *diskGuard) admit() error {
	if g == nil {
		return nil
	}
	if g.walBroken.Load() {
		return errWALBroken
	}
	now := time.Now().UnixNano()
	if last := g.probedAt.Load(); now-last >= int64(diskProbeEvery) && g.probedAt.CompareAndSwap(last, now) {
		g.probe()
	}
	if g.lowSpace.Load() || g.bgFull.Load() {
		return ErrDiskFull
	}
	return nil
}

// probe reads the free space of the data directory's file system.
func (g *diskGuard) probe() {
	u, err := g.fs.GetDiskUsage(g.dir)
	if err != nil {
		return // no statistics (some file systems): rely on ENOSPC alone
	}
	g.avail.Store(u.AvailBytes)
	low := u.AvailBytes < g.reserve
	if was := g.lowSpace.Swap(low); was != low {
		if low {
			g.logf("disk space low: writes refused", "availBytes", u.AvailBytes, "reserveBytes", g.reserve)
		} else {
			g.logf("disk space available again: writes resume", "availBytes", u.AvailBytes)
		}
	}
}

// noteError records err from a commit (wal true: the WAL write or sync
// failed) and returns the error the writer answers: OutOfDiskSpace for
// ENOSPC, err otherwise.
func (g *diskGuard) noteError(err error, wal bool) error {
	if g == nil || !isNoSpace(err) {
		return err
	}
	if wal {
		g.walBroken.Store(true)
		g.logf("WAL write failed for lack of space: writes refused until restart", "err", err)
		return errWALBroken
	}
	g.bgFull.Store(true)
	return ErrDiskFull
}

// listen adds the guard's handlers to po's event listener: ENOSPC in the
// background refuses writes, a successful flush admits them again, and
// background errors are logged at a bounded rate (Pebble retries a failed
// flush in a loop, which logged one line per try).
func (g *diskGuard) listen(po *pebble.Options) {
	l := &pebble.EventListener{
		BackgroundError: func(err error) {
			if isNoSpace(err) {
				if !g.bgFull.Swap(true) {
					g.logf("a background write found the disk full: writes refused", "err", err)
					return
				}
			}
			g.logf("storage background error", "err", err)
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err == nil && g.bgFull.Swap(false) {
				g.logf("a flush succeeded: writes resume")
			}
		},
	}
	po.EventListener = l
}

// logf logs one error line unless one was logged within diskLogEvery; it
// counts the lines it drops and reports the count with the next one.
func (g *diskGuard) logf(msg string, args ...any) {
	if g.log == nil {
		return
	}
	g.logMu.Lock()
	now := time.Now()
	if !g.loggedAt.IsZero() && now.Sub(g.loggedAt) < diskLogEvery && !strings.Contains(msg, "resume") {
		g.suppressed++
		g.logMu.Unlock()
		return
	}
	if g.suppressed > 0 {
		args = append(args, "suppressed", g.suppressed)
	}
	g.loggedAt, g.suppressed = now, 0
	g.logMu.Unlock()
	g.log.Error(msg, append(args, "component", "storage")...)
}

// isNoSpace reports whether err is (or wraps, or describes) ENOSPC.
func isNoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	return strings.Contains(err.Error(), syscall.ENOSPC.Error())
}

// DiskStatus describes the guard's view of the disk for serverStatus.
type DiskStatus struct {
	// AvailBytes is the free space the last probe found (0 in memory).
	AvailBytes uint64
	// Full reports whether writes are refused now.
	Full bool
}

// Disk returns the store's disk status.
func (s *Store) Disk() DiskStatus {
	g := s.disk
	if g == nil {
		return DiskStatus{}
	}
	return DiskStatus{AvailBytes: g.avail.Load(), Full: g.lowSpace.Load() || g.bgFull.Load() || g.walBroken.Load()}
}

// wrapCommitErr turns a commit failure into the writer's error.
func (s *Store) wrapCommitErr(err error, wal bool) error {
	if e := s.disk.noteError(err, wal); e != err {
		return e
	}
	if wal {
		return fmt.Errorf("storage: sync: %w", err)
	}
	return fmt.Errorf("storage: commit: %w", err)
}

// diskFS returns the file system whose free space the guard probes.
func diskFS(fs vfs.FS) vfs.FS {
	if fs == nil {
		return vfs.Default
	}
	return fs
}
