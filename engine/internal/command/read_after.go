package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// waitAfterClusterTime makes a command with readConcern afterClusterTime
// wait until every oplog entry up to that time is applied, so that it
// reads them (causal consistency), bounded by ctx (maxTimeMS: then
// MaxTimeMSExpired). A time later than the current cluster time answers
// InvalidOptions, as mongod's waitForReadConcern does; a standalone
// answers IllegalOperation. at nil waits for nothing.
//
// On one node the cluster time also moves without an oplog entry (a
// reply's operationTime after a write): where mongod writes a no-op
// entry to reach such a time, the wait here ends once the writes that
// held the store's write lock when it began are applied, because every
// entry up to the current cluster time got its ts under that lock.
// https://www.mongodb.com/docs/v7.0/reference/read-concern/#afterclustertime
func (e *Env) waitAfterClusterTime(ctx context.Context, at *bson.Timestamp) error {
	if at == nil {
		return nil
	}
	if e.Config.Standalone {
		return mongoerr.New(mongoerr.IllegalOperation, "Cannot specify afterClusterTime readConcern without replication enabled")
	}
	cur := e.clock.current()
	if tsLess(cur, *at) {
		return mongoerr.Newf(mongoerr.InvalidOptions, "readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: { ts: Timestamp(%d, %d) }; current clusterTime: { ts: Timestamp(%d, %d) }", at.T, at.I, cur.T, cur.I)
	}
	if !tsLess(e.Store.LastApplied(), *at) {
		return nil
	}
	applied := make(chan struct{})
	go func() {
		// An empty write takes the write lock once every writer ahead of
		// it has applied its batch, then returns without committing.
		_ = e.Store.Write(func(*storage.Writer) error { return nil })
		close(applied)
	}()
	select {
	case <-applied:
		return nil
	case <-ctx.Done():
		return ctxErr(ctx.Err())
	}
}
