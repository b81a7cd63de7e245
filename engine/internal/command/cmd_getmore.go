package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("getMore", &spec{run: runGetMore, apiV1: true, help: "get more results from a cursor"})
	register("killCursors", &spec{run: runKillCursors, apiV1: true, help: "kill cursors"})
}

// runGetMore returns the next batch of a cursor.
// https://www.mongodb.com/docs/manual/reference/command/getMore/
func runGetMore(ctx context.Context, r *Request) (bson.D, error) {
	idv := r.Body.Index(0).Value()
	id, ok := idv.Int64OK()
	if !ok {
		return nil, mongoerr.FieldType("getMore", "getMore", typeName(idv.Type), "long")
	}
	var (
		coll      string
		haveColl  bool
		batchSize int64
	)
	err := fields("getMore", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "collection":
			coll, err = wantString("getMore", k, v)
			haveColl = true
		case "batchSize":
			batchSize, err = wantNonNegative("getMore", k, v)
		case "term", "lastKnownCommittedOpTime":
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !haveColl {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'getMore.collection' is missing but a required field")
	}
	c := r.Env.Cursors.get(id)
	if c == nil {
		return nil, cursorNotFound(id)
	}
	ns := r.DB + "." + coll
	if c.NS != ns {
		return nil, mongoerr.Newf(mongoerr.Unauthorized, "Requested getMore on namespace '%s', but cursor belongs to a different namespace %s", ns, c.NS)
	}
	if !c.mu.TryLock() {
		return nil, mongoerr.Newf(mongoerr.CursorInUse, "cursor id %d is already in use", id)
	}
	if c.killed {
		c.mu.Unlock()
		return nil, cursorNotFound(id)
	}
	if cs, ok := c.src.(*changeStream); ok {
		return changeStreamGetMore(ctx, r, c, cs, batchSize)
	}
	if _, err := r.Body.LookupErr("maxTimeMS"); err == nil {
		// Formwork has no tailable (awaitData) cursors, the only ones
		// whose getMore takes maxTimeMS, as its wait for new data.
		c.mu.Unlock()
		return nil, mongoerr.New(mongoerr.BadValue, "cannot set maxTimeMS on getMore command for a non-awaitData cursor")
	}
	if err := c.reads.killedBy(r.Env.Store, c.NS); err != nil {
		c.mu.Unlock()
		r.Env.Cursors.remove(id)
		return nil, err
	}
	if rp, ok := c.src.(reporter); ok {
		rp.attach(r.op)
	}
	if r.op != nil {
		r.op.mu.Lock()
		r.op.origin = c.origin
		r.op.mu.Unlock()
	}
	batch, pending, done, err := fillBatch(ctx, c.src, c.pending, batchSize)
	c.pending = pending
	c.planSummary = r.op.keepSummary(c.planSummary)
	c.lastUsed = time.Now()
	c.mu.Unlock()
	if err != nil {
		r.Env.Cursors.remove(id)
		return nil, executorError("getMore", err)
	}
	if done {
		r.Env.Cursors.remove(id)
		id = 0
	}
	return cursorReply(id, ns, "nextBatch", batch), nil
}

// runKillCursors closes cursors.
// https://www.mongodb.com/docs/manual/reference/command/killCursors/
func runKillCursors(ctx context.Context, r *Request) (bson.D, error) {
	if name, _ := r.Body.Index(0).Value().StringValueOK(); name != "$cmd.aggregate" { // a database's aggregate cursors
		if _, err := collectionName(r); err != nil {
			return nil, err
		}
	}
	var ids []int64
	have := false
	err := fields("killCursors", r.Body, func(k string, v bson.RawValue) error {
		if k != "cursors" {
			return errUnknown
		}
		have = true
		arr, ok := v.ArrayOK()
		if !ok {
			return mongoerr.FieldType("killCursors", k, typeName(v.Type), "array")
		}
		vals, _ := arr.Values()
		for _, e := range vals {
			n, ok := e.Int64OK()
			if !ok {
				return mongoerr.FieldType("killCursors", "cursors", typeName(e.Type), "long")
			}
			ids = append(ids, n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !have {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'killCursors.cursors' is missing but a required field")
	}
	killed, notFound := bson.A{}, bson.A{}
	for _, id := range ids {
		if r.Env.Cursors.remove(id) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	return bson.D{
		{Key: "cursorsKilled", Value: killed},
		{Key: "cursorsNotFound", Value: notFound},
		{Key: "cursorsAlive", Value: bson.A{}},
		{Key: "cursorsUnknown", Value: bson.A{}},
	}, nil
}
