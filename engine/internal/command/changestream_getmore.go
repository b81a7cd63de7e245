package command

import (
	"context"
	"github.com/formworkdb/formwork/engine/internal/admission"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// defaultAwait is how long a change stream's getMore waits for events
// when it has no maxTimeMS (mongod's awaitData default).
const defaultAwait = time.Second

// changeStreamGetMore answers a getMore on a change stream cursor, whose
// lock the caller holds (and this releases). It returns at once when
// events are queued; otherwise it waits, holding no store lock and
// without polling in a loop, until a commit adds oplog entries
// (Store.OplogChanged) or maxTimeMS passes, then answers what it has,
// possibly nothing, with the new postBatchResumeToken.
// https://www.mongodb.com/docs/v7.0/reference/command/getMore/
func changeStreamGetMore(ctx context.Context, r *Request, c *Cursor, cs *changeStream, batchSize int64) (bson.D, error) {
	defer c.mu.Unlock()
	if err := failGetMore(r); err != nil {
		c.mu.Unlock()
		r.Env.Cursors.remove(c.ID)
		c.mu.Lock() // the deferred unlock
		return nil, changeStreamError(err)
	}
	await := defaultAwait
	if v, err := r.Body.LookupErr("maxTimeMS"); err == nil {
		if ms, ok := v.AsInt64OK(); ok && ms >= 0 {
			await = time.Duration(ms) * time.Millisecond
		}
	}
	timer := time.NewTimer(await)
	defer timer.Stop()
	h := &aggHost{r: r}
	for {
		changed := r.Env.Store.OplogChanged()
		if err := cs.poll(ctx, h, int(batchSize)); err != nil {
			c.mu.Unlock()
			r.Env.Cursors.remove(c.ID)
			c.mu.Lock() // the deferred unlock
			return nil, changeStreamError(executorError("getMore", err))
		}
		if len(cs.queue) > 0 || cs.invalidated {
			break
		}
		resume := admission.Suspend(ctx)
		select {
		case <-changed:
			resume()
			continue
		case <-timer.C:
		case <-ctx.Done():
		case <-cs.killed:
		}
		resume()
		break
	}
	batch := cs.take(int(batchSize))
	c.lastUsed = time.Now()
	id := c.ID
	if cs.finished() {
		c.mu.Unlock()
		r.Env.Cursors.remove(id)
		c.mu.Lock()
		id = 0
	}
	return changeStreamReply(id, c.NS, "nextBatch", batch, cs.pbrt), nil
}
