package extref

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// loadBatch bounds the source ids of one $in read of InsertMany (a
// variable for the tests).
var loadBatch = 10000

// InsertMany is the bulk load of Insert: docs[i] refers to sourceIDs[i].
// It reads the distinct sources once ($in, in batches of 10,000 ids),
// inserts every document with its copy in one ordered insertMany, and
// returns them as stored. It wraps ErrParentNotFound, inserting nothing,
// when a source does not exist.
//
// Like Insert it then reads the sources again: a source whose copy
// changed meanwhile is synced (all its live documents), and the documents
// of a source deleted meanwhile are removed again; InsertMany then
// returns the documents kept with an error wrapping ErrParentNotFound.
// If the insertMany itself fails part way, the documents before the
// failing one are stored (ordered insert) and their copies may be stale
// until Check with repair.
func (r *Reference[S, R, C]) InsertMany(ctx context.Context, sourceIDs []any, docs []R) ([]R, error) {
	if len(sourceIDs) != len(docs) {
		return nil, fmt.Errorf("extref: insert many: %d source ids for %d documents", len(sourceIDs), len(docs))
	}
	if len(docs) == 0 {
		return nil, nil
	}
	keys := make([]string, len(docs))
	var distinct bson.A
	seen := map[string]bool{}
	for i, id := range sourceIDs {
		t, data, err := bson.MarshalValue(id)
		if err != nil {
			return nil, fmt.Errorf("extref: insert many: source id %d: %w", i, err)
		}
		rv := bson.RawValue{Type: t, Value: data}
		keys[i] = rawKey(rv)
		if !seen[keys[i]] {
			seen[keys[i]] = true
			distinct = append(distinct, rv)
		}
	}
	srcs, err := r.readSourcesBatched(ctx, distinct)
	if err != nil {
		return nil, fmt.Errorf("extref: insert many: %w", err)
	}
	for i, k := range keys {
		if _, ok := srcs[k]; !ok {
			return nil, fmt.Errorf("extref: insert many: document %d: source %v: %w", i, sourceIDs[i], ErrParentNotFound)
		}
	}
	raws := make([]any, len(docs))
	for i, d := range docs {
		raw, err := r.embed(d, srcs[keys[i]])
		if err != nil {
			return nil, fmt.Errorf("extref: insert many: document %d: %w", i, err)
		}
		raws[i] = raw
	}
	if _, err := r.refs.InsertMany(ctx, raws); err != nil {
		return nil, fmt.Errorf("extref: insert many: %w", err)
	}
	gone, err := r.settleLoad(ctx, distinct, srcs, keys, raws)
	if err != nil && !errors.Is(err, ErrParentNotFound) {
		return nil, fmt.Errorf("extref: insert many: %w", err)
	}
	out := make([]R, 0, len(docs))
	for i, raw := range raws {
		if gone[keys[i]] {
			continue
		}
		var d R
		if err := bson.Unmarshal(raw.(bson.Raw), &d); err != nil {
			return nil, fmt.Errorf("extref: insert many: %w", err)
		}
		out = append(out, d)
	}
	if err != nil {
		return out, fmt.Errorf("extref: insert many: %w", err)
	}
	return out, nil
}

// settleLoad re-reads the sources of a bulk load: it syncs those whose
// copy changed since the load read them and removes the new documents of
// those deleted, returned by rawKey with an error wrapping
// ErrParentNotFound.
func (r *Reference[S, R, C]) settleLoad(ctx context.Context, distinct bson.A, srcs map[string]bson.Raw, keys []string, raws []any) (map[string]bool, error) {
	now, err := r.readSourcesBatched(ctx, distinct)
	if err != nil {
		return nil, err
	}
	gone := map[string]bool{}
	for _, id := range distinct {
		k := rawKey(id.(bson.RawValue))
		cur, ok := now[k]
		if !ok {
			gone[k] = true
			continue
		}
		if !r.sameCopy(srcs[k], cur) {
			if _, err := r.settle(ctx, cur); err != nil {
				return nil, err
			}
		}
	}
	if len(gone) == 0 {
		return gone, nil
	}
	var ids bson.A
	for i, raw := range raws {
		if gone[keys[i]] {
			ids = append(ids, raw.(bson.Raw).Lookup("_id"))
		}
	}
	for i := 0; i < len(ids); i += loadBatch {
		batch := ids[i:min(i+loadBatch, len(ids))]
		if _, err := r.refs.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: batch}}}}); err != nil {
			return nil, fmt.Errorf("%d sources deleted meanwhile, and removing their new documents failed (run Check with repair): %w", len(gone), err)
		}
	}
	return gone, fmt.Errorf("%d sources deleted meanwhile, their %d new documents removed: %w", len(gone), len(ids), ErrParentNotFound)
}

// readSourcesBatched reads the copied fields of the sources ids, by
// rawKey of their _id, in $in queries of at most loadBatch ids.
func (r *Reference[S, R, C]) readSourcesBatched(ctx context.Context, ids bson.A) (map[string]bson.Raw, error) {
	out := make(map[string]bson.Raw, len(ids))
	for i := 0; i < len(ids); i += loadBatch {
		part, err := r.readSources(ctx, ids[i:min(i+loadBatch, len(ids))])
		if err != nil {
			return nil, err
		}
		for k, v := range part {
			out[k] = v
		}
	}
	return out, nil
}
