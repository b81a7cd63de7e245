package storage

import (
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// tableFS is the file system of an in-memory store: Pebble's MemFS, except
// that sstables keep their bytes in a list of chunks instead of one slice.
//
// MemFS appends every write to one slice, and Go grows a large slice by a
// quarter at a time, so writing a 2 MiB table copied it about five times
// over and left as many dead arrays for the collector: 12% of the CPU of
// an insertMany went there. A chunk list is written once and never moved.
// Everything but the contents of ".sst" files (directories, names, the
// manifest, the options file) stays in MemFS, which also holds an empty
// placeholder for each table so that List and Lock see it.
type tableFS struct {
	vfs.FS // *vfs.MemFS
	mu     sync.Mutex
	tables map[string]*sstData
}

// newTableFS returns an empty in-memory file system.
func newTableFS() *tableFS {
	return &tableFS{FS: vfs.NewMem(), tables: map[string]*sstData{}}
}

// isTable reports whether name is an sstable, whose contents tableFS holds.
func isTable(name string) bool { return strings.HasSuffix(name, ".sst") }

func (fs *tableFS) table(name string) *sstData {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.tables[name]
}

// Create creates or truncates name.
func (fs *tableFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !isTable(name) {
		return f, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	t := &sstData{name: fs.FS.PathBase(name), modTime: time.Now()}
	fs.mu.Lock()
	fs.tables[name] = t
	fs.mu.Unlock()
	return &sstFile{t: t, write: true}, nil
}

// Open opens name for reading.
func (fs *tableFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if t := fs.table(name); t != nil {
		return &sstFile{t: t}, nil
	}
	return fs.FS.Open(name, opts...)
}

// OpenReadWrite opens name for reading and writing.
func (fs *tableFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if t := fs.table(name); t != nil {
		return &sstFile{t: t, write: true}, nil
	}
	if isTable(name) {
		if _, err := fs.FS.Stat(name); err != nil {
			return fs.Create(name, category)
		}
	}
	return fs.FS.OpenReadWrite(name, category, opts...)
}

// Remove removes name; open handles keep reading it.
func (fs *tableFS) Remove(name string) error {
	if err := fs.FS.Remove(name); err != nil {
		return err
	}
	fs.mu.Lock()
	delete(fs.tables, name)
	fs.mu.Unlock()
	return nil
}

// RemoveAll removes name and everything below it.
func (fs *tableFS) RemoveAll(name string) error {
	if err := fs.FS.RemoveAll(name); err != nil {
		return err
	}
	prefix := strings.TrimSuffix(name, "/") + "/"
	fs.mu.Lock()
	for n := range fs.tables {
		if n == name || strings.HasPrefix(n, prefix) {
			delete(fs.tables, n)
		}
	}
	fs.mu.Unlock()
	return nil
}

// Rename renames oldname to newname, replacing newname.
func (fs *tableFS) Rename(oldname, newname string) error {
	if err := fs.FS.Rename(oldname, newname); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	t := fs.tables[oldname]
	delete(fs.tables, oldname)
	delete(fs.tables, newname)
	if t != nil {
		fs.tables[newname] = t
	}
	return nil
}

// Link makes newname a hard link to oldname.
func (fs *tableFS) Link(oldname, newname string) error {
	if err := fs.FS.Link(oldname, newname); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if t := fs.tables[oldname]; t != nil {
		fs.tables[newname] = t
	}
	return nil
}

// ReuseForWrite renames oldname to newname and opens it for writing.
func (fs *tableFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if !isTable(oldname) && !isTable(newname) {
		return fs.FS.ReuseForWrite(oldname, newname, category)
	}
	if err := fs.Remove(oldname); err != nil {
		return nil, err
	}
	return fs.Create(newname, category)
}

// Stat describes name.
func (fs *tableFS) Stat(name string) (vfs.FileInfo, error) {
	if t := fs.table(name); t != nil {
		return t.info(), nil
	}
	return fs.FS.Stat(name)
}

// sstChunkMax is the largest chunk of a table: chunks double from
// 4 KiB up to it, so that small tables stay small.
const sstChunkMax = 256 << 10

// sstData is the contents of one sstable.
type sstData struct {
	name    string
	mu      sync.RWMutex
	chunks  [][]byte // chunk i holds the bytes from starts[i]
	starts  []int64
	size    int64
	modTime time.Time
}

// writeAt writes p at off, growing the table.
func (t *sstData) writeAt(p []byte, off int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	end := off + int64(len(p))
	for t.capacity() < end {
		n := min(4096<<min(len(t.chunks), 16), sstChunkMax)
		t.starts = append(t.starts, t.capacity())
		t.chunks = append(t.chunks, make([]byte, n))
	}
	for len(p) > 0 {
		i := t.chunkAt(off)
		c := copy(t.chunks[i][off-t.starts[i]:], p)
		p, off = p[c:], off+int64(c)
	}
	t.size = max(t.size, end)
	t.modTime = time.Now()
}

// capacity is the size the chunks can hold.
func (t *sstData) capacity() int64 {
	if len(t.chunks) == 0 {
		return 0
	}
	last := len(t.chunks) - 1
	return t.starts[last] + int64(len(t.chunks[last]))
}

// chunkAt returns the index of the chunk holding offset off < capacity.
func (t *sstData) chunkAt(off int64) int {
	return sort.Search(len(t.starts), func(i int) bool { return t.starts[i] > off }) - 1
}

// readAt reads into p from off, as io.ReaderAt.
func (t *sstData) readAt(p []byte, off int64) (int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if off < 0 {
		return 0, os.ErrInvalid
	}
	if off >= t.size {
		return 0, io.EOF
	}
	want := len(p)
	p = p[:min(int64(len(p)), t.size-off)]
	n := 0
	for len(p) > 0 {
		i := t.chunkAt(off)
		c := copy(p, t.chunks[i][off-t.starts[i]:])
		p, off, n = p[c:], off+int64(c), n+c
	}
	if n < want {
		return n, io.EOF
	}
	return n, nil
}

func (t *sstData) info() vfs.FileInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return &sstInfo{name: t.name, size: t.size, modTime: t.modTime}
}

// sstFile is an open handle of a sstData.
type sstFile struct {
	t     *sstData
	pos   int64
	write bool
}

func (f *sstFile) Close() error { return nil }

func (f *sstFile) Read(p []byte) (int, error) {
	n, err := f.t.readAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *sstFile) ReadAt(p []byte, off int64) (int, error) { return f.t.readAt(p, off) }

func (f *sstFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *sstFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.write {
		return 0, os.ErrPermission
	}
	if off < 0 {
		return 0, os.ErrInvalid
	}
	f.t.writeAt(p, off)
	return len(p), nil
}

func (f *sstFile) Preallocate(offset, length int64) error { return nil }
func (f *sstFile) Stat() (vfs.FileInfo, error)            { return f.t.info(), nil }
func (f *sstFile) Sync() error                            { return nil }
func (f *sstFile) SyncData() error                        { return nil }

func (f *sstFile) SyncTo(length int64) (fullSync bool, err error) { return false, nil }

func (f *sstFile) Prefetch(offset, length int64) error { return nil }
func (f *sstFile) Fd() uintptr                         { return vfs.InvalidFd }

// sstInfo describes a sstData.
type sstInfo struct {
	name    string
	size    int64
	modTime time.Time
}

func (i *sstInfo) Name() string           { return i.name }
func (i *sstInfo) Size() int64            { return i.size }
func (i *sstInfo) Mode() os.FileMode      { return 0o755 }
func (i *sstInfo) ModTime() time.Time     { return i.modTime }
func (i *sstInfo) IsDir() bool            { return false }
func (i *sstInfo) Sys() any               { return nil }
func (i *sstInfo) DeviceID() vfs.DeviceID { return vfs.DeviceID{} }
