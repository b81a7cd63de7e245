package command

import (
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("fsync", &spec{run: runFsync, adminOnly: true, help: "flush data to disk; lock:true blocks writes (fsyncLock)"})
	register("fsyncUnlock", &spec{run: runFsyncUnlock, adminOnly: true, help: "release one fsyncLock"})
}

// fsyncLock is the state of fsync's write lock: how many fsyncLocks are
// outstanding. The storage write lock is held while count > 0.
type fsyncLock struct {
	mu    sync.Mutex
	count int64
}

// ReleaseFsyncLock drops every outstanding fsyncLock, so that writers it
// blocks finish; the engine calls it first when it closes.
func (e *Env) ReleaseFsyncLock() {
	l := &e.fsync
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count > 0 {
		l.count = 0
		e.Store.UnlockWrites()
	}
}

// runFsync flushes the storage to disk; with lock: true it also blocks
// every write until a matching fsyncUnlock, while reads continue.
// https://www.mongodb.com/docs/manual/reference/command/fsync/
func runFsync(ctx context.Context, r *Request) (bson.D, error) {
	lock := false
	if err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "lock":
			b, ok := asBool(v)
			if !ok {
				return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'fsync.lock' is the wrong type '%s', expected types '[bool, long, int, decimal, double']", typeName(v.Type))
			}
			lock = b
		case "async":
			if b, _ := asBool(v); b {
				return mongoerr.New(mongoerr.IllegalOperation, "async option to fsync is not supported")
			}
		case "forBackup":
		default:
			return errUnknown
		}
		return nil
	}); err != nil {
		return nil, err
	}
	e := r.Env
	if !lock {
		if err := e.Store.Flush(); err != nil {
			return nil, err
		}
		return bson.D{{Key: "numFiles", Value: int32(1)}}, nil
	}
	l := &e.fsync
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		if err := e.Store.LockWrites(); err != nil {
			return nil, err
		}
	} else if err := e.Store.Flush(); err != nil {
		return nil, err
	}
	l.count++
	e.log.Info("fsyncLock: writes are blocked until fsyncUnlock", "lockCount", l.count)
	return bson.D{
		{Key: "info", Value: "now locked against writes, use db.fsyncUnlock() to unlock"},
		{Key: "lockCount", Value: l.count},
		{Key: "seeAlso", Value: "http://dochub.mongodb.org/core/fsynccommand"},
	}, nil
}

// runFsyncUnlock releases one fsyncLock; writes resume when none is left.
// https://www.mongodb.com/docs/manual/reference/command/fsyncUnlock/
func runFsyncUnlock(ctx context.Context, r *Request) (bson.D, error) {
	if err := noFields(r); err != nil {
		return nil, err
	}
	e := r.Env
	l := &e.fsync
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "fsyncUnlock called when not locked")
	}
	l.count--
	if l.count == 0 {
		e.Store.UnlockWrites()
	}
	e.log.Info("fsyncUnlock completed", "lockCount", l.count)
	return bson.D{
		{Key: "info", Value: "fsyncUnlock completed"},
		{Key: "lockCount", Value: l.count},
	}, nil
}
