package storage

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// walFullFS makes writes to WAL files fail with ENOSPC once full is set.
type walFullFS struct {
	vfs.FS
	full atomic.Bool
}

func (f *walFullFS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return &walFullFile{File: file, fs: f}, nil
}

func (f *walFullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	return f.wrap(name, file, err)
}

func (f *walFullFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(old, name, c)
	return f.wrap(name, file, err)
}

type walFullFile struct {
	vfs.File
	fs *walFullFS
}

func (f *walFullFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

// TestWALWriteOnFullDisk: a WAL write that fails with ENOSPC answers the
// writer OutOfDiskSpace, and every later write is refused before it
// reaches Pebble (whose next WAL write or rotation would panic) while
// reads keep working.
func TestWALWriteOnFullDisk(t *testing.T) {
	fs := &walFullFS{FS: vfs.NewMem()}
	s, err := Open(Options{Dir: "db", fs: fs})
	if err != nil {
		t.Fatal(err)
	}
	insert := func(id int) error {
		return s.Write(func(w *Writer) error {
			c, err := w.EnsureCollection("db.c")
			if err != nil {
				return err
			}
			raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
			_, err = w.Insert(c, raw)
			return err
		})
	}
	if err := insert(1); err != nil {
		t.Fatal(err)
	}
	fs.full.Store(true)
	for i := 2; i < 5; i++ {
		err := insert(i)
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != mongoerr.OutOfDiskSpace {
			t.Fatalf("insert %d on a full WAL: %v", i, err)
		}
	}
	if !s.Disk().Full {
		t.Fatal("Disk().Full is false after a WAL write failed")
	}
	sn := s.Snapshot()
	st, err := CollStats(sn, s.Collection("db.c"))
	sn.Close()
	if err != nil || st.Count < 1 {
		t.Fatalf("read after a failed WAL write: %+v %v", st, err)
	}
	_ = s.Close() // Pebble reports the WAL error; it must not panic
}
