package storage

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walZeroAhead is how far past its end a write-ahead log file is extended
// with zeros at a time.
const walZeroAhead = 512 << 10

// walZeros is the buffer the zero extension writes from.
var walZeros = make([]byte, 64<<10)

// walFS wraps the operating system's file system so that Pebble's
// write-ahead log files are written inside their existing length.
//
// A commit's fdatasync costs about one synced write when the write lands
// inside the file, but noticeably more when it extends the file: the
// new length (and, for fallocated space, the written extent) is metadata
// the sync must journal too. Pebble preallocates its logs with
// FALLOC_FL_KEEP_SIZE, which leaves every commit extending the file, and
// reuses (recycles) old logs only after their memtables are flushed, so a
// fresh log — every log for the first memtables after Open — paid the
// extension on each commit: one durable client reached about 60% of the
// disk's synced-write rate. walFS extends a log with zeros walZeroAhead
// bytes at a time, so only one commit in thousands changes the length.
//
// The zeros are what Pebble already expects after a log's last record
// (preallocated or recycled space): a log closed cleanly ends with an EOF
// trailer before them, and the zeros after the last log's final record
// read as its unclean end, which recovery tolerates for the last log
// only. Open flushes the replayed logs before it creates a new one, so a
// log ending in zeros never becomes an older log. If writing the zeros
// fails (a full disk), the file is written as Pebble would write it.
type walFS struct {
	vfs.FS
	stats *walStats
}

// walStats counts the log's syncs and the time they took, for
// serverStatus (WALStats).
type walStats struct {
	syncs, syncNanos atomic.Int64
}

// isWAL reports whether Pebble creates the named file for its
// write-ahead log.
func isWAL(name string, category vfs.DiskWriteCategory) bool {
	return category == "pebble-wal" || strings.HasSuffix(name, ".log")
}

// Create creates a file; a log file starts empty, with no zeros yet.
func (fs walFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !isWAL(name, category) {
		return f, err
	}
	return &walFile{File: f, stats: fs.stats}, nil
}

// ReuseForWrite reuses a recycled log, whose length is already written.
func (fs walFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil || !isWAL(newname, category) {
		return f, err
	}
	st, err := f.Stat()
	if err != nil {
		return f, nil // written as Pebble writes it
	}
	return &walFile{File: f, size: st.Size(), stats: fs.stats}, nil
}

// walFile is a log file written sequentially from its start; size is the
// length it is known to have (written data and zeros).
type walFile struct {
	vfs.File
	off    int64 // where the next Write lands
	size   int64
	failed bool // zero extension failed once: stop trying
	stats  *walStats
}

// SyncData syncs the log (a commit's fdatasync) and counts it.
func (f *walFile) SyncData() error {
	start := time.Now()
	err := f.File.SyncData()
	if f.stats != nil {
		f.stats.syncs.Add(1)
		f.stats.syncNanos.Add(int64(time.Since(start)))
	}
	return err
}

// Write writes p at the end of what was written, first extending the
// file with zeros when p would reach past its length.
func (f *walFile) Write(p []byte) (int, error) {
	if end := f.off + int64(len(p)); end > f.size && !f.failed {
		f.extend(end)
	}
	n, err := f.File.Write(p)
	f.off += int64(n)
	f.size = max(f.size, f.off)
	return n, err
}

// extend writes zeros from the file's length to walZeroAhead bytes past
// end, so that the next writes land inside the file.
func (f *walFile) extend(end int64) {
	target := end + walZeroAhead
	for f.size < target {
		n := min(int64(len(walZeros)), target-f.size)
		w, err := f.File.WriteAt(walZeros[:n], f.size)
		f.size += int64(w)
		if err != nil {
			f.failed = true
			return
		}
	}
}
