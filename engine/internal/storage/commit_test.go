package storage

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// slowSyncFS counts the syncs of WAL files and makes each take delay, as
// a slow disk would.
type slowSyncFS struct {
	vfs.FS
	delay time.Duration
	syncs atomic.Int64
}

func (f *slowSyncFS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return &slowSyncFile{File: file, fs: f}, nil
}

func (f *slowSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	return f.wrap(name, file, err)
}

func (f *slowSyncFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(old, name, c)
	return f.wrap(name, file, err)
}

func (f *slowSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	return f.wrap(name, file, err)
}

type slowSyncFile struct {
	vfs.File
	fs *slowSyncFS
}

func (f *slowSyncFile) Sync() error {
	f.fs.syncs.Add(1)
	time.Sleep(f.fs.delay)
	return f.File.Sync()
}

func (f *slowSyncFile) SyncData() error {
	f.fs.syncs.Add(1)
	time.Sleep(f.fs.delay)
	return f.File.SyncData()
}

// TestConcurrentWritersShareSyncs commits from 32 goroutines to a store
// whose WAL syncs take 2 ms: group commit must serve them with far fewer
// syncs than commits, and every write must be there afterwards.
func TestConcurrentWritersShareSyncs(t *testing.T) {
	fs := &slowSyncFS{FS: vfs.NewMem(), delay: 10 * time.Millisecond} // long enough for the others to queue even on a loaded machine
	s, err := Open(Options{Dir: "db", fs: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(func(w *Writer) error { _, err := w.EnsureCollection("db.c"); return err }); err != nil {
		t.Fatal(err)
	}
	const writers, each = 32, 20
	before := fs.syncs.Load()
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Write(func(w *Writer) error {
					_, err := w.Insert(w.Collection("db.c"), doc(t, bson.D{{Key: "_id", Value: g*each + i}}))
					return err
				})
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	syncs := fs.syncs.Load() - before
	if syncs > writers*each/4 {
		t.Errorf("%d syncs for %d commits: writers do not share syncs", syncs, writers*each)
	}
	sn := s.Snapshot()
	defer sn.Close()
	st, err := CollStats(sn, s.Collection("db.c"))
	if err != nil || st.Count != writers*each {
		t.Fatalf("count = %d, %v; want %d", st.Count, err, writers*each)
	}
	t.Logf("%d syncs for %d commits", syncs, writers*each)
}

func TestWriteAfterCloseFails(t *testing.T) {
	s := open(t, "")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(func(*Writer) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close = %v", err)
	}
}

// TestCatalogReadsDoNotWaitForWriters reads the catalog while a writer
// holds the write lock inside Write.
func TestCatalogReadsDoNotWaitForWriters(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	if err := s.Write(func(w *Writer) error { _, err := w.EnsureCollection("db.c"); return err }); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- s.Write(func(w *Writer) error {
			close(inside)
			<-release
			_, err := w.Insert(w.Collection("db.c"), doc(t, bson.D{{Key: "_id", Value: 1}}))
			return err
		})
	}()
	<-inside
	read := make(chan bool)
	go func() {
		sn := s.Snapshot()
		defer sn.Close()
		c := s.Collection("db.c")
		_, err := sn.Fetch(c, 1)
		read <- c != nil && err == nil && len(s.Collections("db")) == 1 && len(s.Databases()) == 2 // db and local
	}()
	select {
	case ok := <-read:
		if !ok {
			t.Error("catalog read during a write failed")
		}
	case <-time.After(10 * time.Second):
		t.Error("catalog read waited for the writer")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReadsDoNotWaitForSyncs reads while 8 writers commit to a store
// whose WAL syncs take 50 ms: a read that waited for a writer's sync
// would take tens of milliseconds, so the median read stays far below.
func TestReadsDoNotWaitForSyncs(t *testing.T) {
	fs := &slowSyncFS{FS: vfs.NewMem(), delay: 50 * time.Millisecond}
	s, err := Open(Options{Dir: "db", fs: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(func(w *Writer) error {
		c, err := w.EnsureCollection("db.c")
		if err != nil {
			return err
		}
		_, err = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: -1}}))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := s.Write(func(w *Writer) error {
					_, err := w.Insert(w.Collection("db.c"), doc(t, bson.D{{Key: "_id", Value: g*1_000_000 + i}}))
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond) // let the writers get into their syncs
	var took []time.Duration
	for i := 0; i < 50; i++ {
		t0 := time.Now()
		sn := s.Snapshot()
		c := s.Collection("db.c")
		d, err := sn.Fetch(c, 1)
		sn.Close()
		if err != nil || d == nil {
			t.Fatalf("read %d: %v, %v", i, d, err)
		}
		took = append(took, time.Since(t0))
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	slices.Sort(took)
	if med := took[len(took)/2]; med > 10*time.Millisecond {
		t.Errorf("median read took %v while writers synced (50 ms each)", med)
	}
}

// TestLargeBatch commits one batch larger than half a memtable, which
// Pebble applies as a flushable batch, in memory (no WAL) and on disk
// (group commit), and reads it back after reopening the disk store.
func TestLargeBatch(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		s, err := Open(Options{Dir: dir, CacheSize: 16 << 20}) // 1 MiB memtables
		if err != nil {
			t.Fatal(err)
		}
		pad := strings.Repeat("x", 1000)
		const n = 3000
		err = s.Write(func(w *Writer) error {
			c, err := w.EnsureCollection("db.c")
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				if _, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}})); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if dir != "" {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = Open(Options{Dir: dir}); err != nil {
				t.Fatal(err)
			}
		}
		sn := s.Snapshot()
		st, err := CollStats(sn, s.Collection("db.c"))
		if err != nil || st.Count != n {
			t.Fatalf("dir %q: count = %d, %v; want %d", dir, st.Count, err, n)
		}
		sn.Close()
		s.Close()
	}
}
