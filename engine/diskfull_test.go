package engine_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// fullFS wraps the real file system with a disk that can fill up: low
// makes its statistics report almost no free space, and noTables makes
// every new table file (a memtable flush, a compaction) fail with ENOSPC
// while the statistics still claim free space, as on a disk another
// process fills between two probes.
type fullFS struct {
	vfs.FS
	low      atomic.Bool
	noTables atomic.Bool
	refused  atomic.Int64
}

func (f *fullFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	if f.low.Load() {
		return vfs.DiskUsage{AvailBytes: 1 << 20, TotalBytes: 100 << 30, UsedBytes: 100<<30 - 1<<20}, nil
	}
	return vfs.DiskUsage{AvailBytes: 50 << 30, TotalBytes: 100 << 30, UsedBytes: 50 << 30}, nil
}

func (f *fullFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if f.noTables.Load() && strings.HasSuffix(name, ".sst") {
		f.refused.Add(1)
		return nil, &fsError{op: "create", name: name}
	}
	return f.FS.Create(name, cat)
}

// fsError is an *os.PathError-like ENOSPC.
type fsError struct{ op, name string }

func (e *fsError) Error() string { return e.op + " " + e.name + ": " + syscall.ENOSPC.Error() }
func (e *fsError) Unwrap() error { return syscall.ENOSPC }

// lockedBuffer is a log sink for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), substr)
}

// TestDiskFullRefusesWrites: with less free space than the reserve,
// every kind of write answers OutOfDiskSpace (14031) at once instead of
// stalling, reads keep working, and writes resume once space returns.
func TestDiskFullRefusesWrites(t *testing.T) {
	ctx := ctxT(t)
	fs := &fullFS{FS: vfs.Default}
	opts := engine.Options{Dir: t.TempDir()}
	engine.WithFS(&opts, fs)
	_, client := testenv.Engine(t, opts)
	coll := client.Database("d").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	fs.low.Store(true)
	time.Sleep(60 * time.Millisecond) // let the last probe expire
	start := time.Now()
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
	wantCode(t, err, 14031, "OutOfDiskSpace")
	_, err = coll.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}})
	wantCode(t, err, 14031, "OutOfDiskSpace")
	err = client.Database("d").RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "name", Value: "x_1"}}}}}).Err()
	wantCode(t, err, 14031, "OutOfDiskSpace")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing three writes took %v", d)
	}
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("read on a full disk: %d, %v", n, err)
	}
	fs.low.Store(false)
	time.Sleep(60 * time.Millisecond)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatalf("write after space returned: %v", err)
	}
}

// TestDiskFullInBackground: a disk that fills without the probe seeing it
// makes Pebble's memtable flushes fail with ENOSPC. Writes then answer
// OutOfDiskSpace instead of stalling once the memtables are full, the
// retried flush's errors are logged a bounded number of times, and writes
// resume once a flush succeeds; nothing acknowledged is lost.
func TestDiskFullInBackground(t *testing.T) {
	ctx := ctxT(t)
	fs := &fullFS{FS: vfs.Default}
	var logs lockedBuffer
	opts := engine.Options{Dir: t.TempDir(), CacheSize: 16 << 20, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	engine.WithFS(&opts, fs)
	_, client := testenv.Engine(t, opts)
	coll := client.Database("d").Collection("c")
	fs.noTables.Store(true)
	pad := strings.Repeat("x", 4<<10)
	acked := 0
	var refusedAt int
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no write refused after %d acknowledged (%d table creations refused)", acked, fs.refused.Load())
		}
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}})
		if err != nil {
			wantCode(t, err, 14031, "OutOfDiskSpace")
			refusedAt = i
			break
		}
		acked++
	}
	time.Sleep(500 * time.Millisecond) // Pebble retries the flush meanwhile
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || int(n) != acked {
		t.Fatalf("read on a full disk: %d of %d, %v", n, acked, err)
	}
	if got := logs.lines("background"); got > 3 {
		t.Errorf("%d log lines about background errors after %d failed flushes", got, fs.refused.Load())
	}
	fs.noTables.Store(false)
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: refusedAt}, {Key: "pad", Value: pad}})
		if err == nil {
			break
		}
		wantCode(t, err, 14031, "OutOfDiskSpace")
		if time.Now().After(deadline) {
			t.Fatal("writes did not resume after space returned")
		}
		time.Sleep(20 * time.Millisecond)
	}
	n, err = coll.CountDocuments(ctx, bson.D{})
	if err != nil || int(n) != acked+1 {
		t.Fatalf("after recovery: %d documents, want %d (%v)", n, acked+1, err)
	}
	t.Logf("%d inserts acknowledged before the refusal; %d table creations refused", acked, fs.refused.Load())
}
