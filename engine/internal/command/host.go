package command

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math/big"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// aggHost is the database as the pipeline of one command sees it
// (agg.Host): reads go through the planner and its plan cache, writes
// through the same paths as insert and update. It is used by the
// goroutine running the command.
type aggHost struct {
	r *Request
	// depth counts nested view resolutions (bounded by maxViewDepth).
	depth int
	// rec, under explain, records the plan of the first query on rec.ns.
	rec *explainRec
}

// maxViewDepth bounds a chain of views defined on views, as mongod's
// 20-level limit does.
const maxViewDepth = 20

// Open runs q on ns through the planner; a view runs its pipeline first.
func (h *aggHost) Open(ctx context.Context, ns string, q agg.Query) (agg.Source, error) {
	if v := h.r.Env.view(ns); v != nil {
		return h.openView(ctx, v, q)
	}
	qq, err := hostQuery(h.r, ns, q)
	if err != nil {
		return nil, err
	}
	var src agg.Source
	if h.rec != nil && h.rec.x == nil && ns == h.rec.ns {
		src, err = h.openExplained(ctx, qq)
	} else {
		src, err = h.r.findSource(ctx, qq, nil)
	}
	if err != nil {
		return nil, err
	}
	if q.Sample > 0 {
		return sample(ctx, src, q.Sample)
	}
	return src, nil
}

// openView runs a view's pipeline over its source, followed by what q
// asks; q's hint applies to the query on the source.
func (h *aggHost) openView(ctx context.Context, v *viewDef, q agg.Query) (agg.Source, error) {
	if h.depth >= maxViewDepth {
		return nil, mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth too deep or view cycle detected. Maximum depth is 20")
	}
	stages := append([]bson.Raw(nil), v.pipeline...)
	stages = append(stages, queryStages(q)...)
	db, coll := storage.SplitNS(v.viewOn)
	sub := &aggHost{r: h.r, depth: h.depth + 1, rec: h.rec}
	if h.rec != nil && h.rec.x == nil && h.rec.ns == v.ns {
		// Explain shows the query on the collection under the view.
		h.rec.ns = v.viewOn
	}
	p, err := agg.Parse(stages, agg.Options{DB: db, Coll: coll, AllowDiskUse: true, Limits: h.r.Env.aggLimits(), TempDir: h.r.Env.tempDir(), Now: h.r.start, ClusterTime: h.r.Env.clock.current(), Collation: q.Collation})
	if err != nil {
		return nil, err
	}
	pq := p.Query()
	pq.Hint = h.r.Env.viewHint(v, q.Hint)
	return sub.runQuery(ctx, p, v.viewOn, pq)
}

// Insert inserts docs into ns, creating it.
func (h *aggHost) Insert(ctx context.Context, ns string, docs []bson.Raw) error {
	if err := h.checkTarget(ns); err != nil {
		return err
	}
	// Like the insert command, it waits for a transaction holding a key
	// it writes (storage.Store.WriteWait).
	return h.r.Env.Store.WriteWait(ctx, func(w *storage.Writer) error {
		c, err := w.EnsureCollection(ns)
		if err != nil {
			return err
		}
		for _, d := range docs {
			doc, err := prepareInsert(d)
			if err != nil {
				return err
			}
			if err := h.r.validateWrite(c, nil, doc); err != nil {
				return err
			}
			if _, err := w.Insert(c, doc); err != nil {
				return writeErr(err)
			}
		}
		return nil
	})
}

// Update runs one update statement on ns, as the update command does.
func (h *aggHost) Update(ctx context.Context, ns string, q, u bson.RawValue, let bson.Raw, upsert, multi bool) (int64, bool, error) {
	if err := h.checkTarget(ns); err != nil {
		return 0, false, err
	}
	filter, ok := q.DocumentOK()
	if !ok {
		return 0, false, mongoerr.New(mongoerr.TypeMismatch, "update filter must be an object")
	}
	st := updateStmt{q: filter, u: u, upsert: upsert, multi: multi}
	res := &writeResult{}
	err := h.r.Env.Store.WriteWait(ctx, func(w *storage.Writer) error {
		*res = writeResult{} // an attempt that waited runs again
		return h.r.updateOne(ctx, w, ns, 0, st, let, res)
	})
	if err != nil {
		return 0, false, writeErr(err)
	}
	return res.n - int64(len(res.upserted)), len(res.upserted) > 0, nil
}

// UniqueIndexOn reports whether ns has a unique index on exactly fields.
func (h *aggHost) UniqueIndexOn(ctx context.Context, ns string, fields []string) (bool, error) {
	c := h.r.Env.Store.Collection(ns)
	if c == nil {
		return false, nil
	}
	want := slices.Clone(fields)
	slices.Sort(want)
	for _, ix := range c.Indexes {
		if !ix.Unique || ix.Def.Spec().PartialFilterExpression != nil {
			continue
		}
		var have []string
		elems, _ := ix.Key().Elements()
		for _, e := range elems {
			have = append(have, e.Key())
		}
		slices.Sort(have)
		if slices.Equal(have, want) {
			return true, nil
		}
	}
	return false, nil
}

// outBatch is how many documents $out writes per storage batch.
const outBatch = 1000

// ReplaceCollection writes docs into a temporary collection with ns's
// options and indexes, then drops ns and renames the temporary collection
// over it in one write, as $out does: readers see the old or the new
// contents, never a mix. On error the temporary collection is dropped.
func (h *aggHost) ReplaceCollection(ctx context.Context, ns string, docs agg.Source) error {
	if h.r.Env.tsColl(ns) != nil {
		return h.ReplaceTimeseries(ctx, ns, nil, docs)
	}
	defer docs.Close()
	if err := h.checkTarget(ns); err != nil {
		return err
	}
	db, _ := storage.SplitNS(ns)
	tmp := db + ".tmp.agg_out." + randomSuffix()
	old := h.r.Env.Store.Collection(ns)
	err := h.r.Env.Store.WriteContext(ctx, func(w *storage.Writer) error {
		var opts bson.Raw
		if old != nil {
			opts = old.Options
		}
		if _, err := w.CreateCollection(tmp, opts); err != nil {
			return err
		}
		if old == nil {
			return nil
		}
		for _, ix := range old.Indexes {
			if ix.Name == "_id_" {
				continue
			}
			sp, err := index.ParseSpec(ix.Spec)
			if err != nil {
				return err
			}
			if _, err := w.CreateIndex(tmp, sp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	drop := func() {
		_ = h.r.Env.Store.WriteContext(ctx, func(w *storage.Writer) error { return w.DropCollection(tmp) })
	}
	done := false
	for !done {
		var batch []bson.Raw
		for len(batch) < outBatch {
			d, err := docs.Next(ctx)
			if err != nil {
				drop()
				return err
			}
			if d == nil {
				done = true
				break
			}
			if d, err = prepareInsert(d); err != nil {
				drop()
				return err
			}
			batch = append(batch, d)
		}
		err := h.r.Env.Store.WriteContext(ctx, func(w *storage.Writer) error {
			c := w.Collection(tmp)
			for _, d := range batch {
				if err := h.r.validateWrite(c, nil, d); err != nil {
					return err
				}
				if _, err := w.Insert(c, d); err != nil {
					return writeErr(err)
				}
			}
			return nil
		})
		if err != nil {
			drop()
			return err
		}
	}
	// Replacing the target is DDL: it waits behind the open transactions
	// holding the target's documents, as mongod's rename with dropTarget
	// does, until maxTimeMS.
	err = h.r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error {
		if w.Collection(ns) != nil {
			if err := w.DropCollection(ns); err != nil {
				return err
			}
		}
		return w.RenameCollection(tmp, ns)
	})
	if err != nil {
		drop()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return ctxErr(err)
		}
	}
	return err
}

// checkTarget rejects writes of $out and $merge mongod refuses: system
// collections and views.
func (h *aggHost) checkTarget(ns string) error {
	db, coll := storage.SplitNS(ns)
	if h.r.Env.view(ns) != nil {
		return mongoerr.Newf(mongoerr.CommandNotSupportedOnView, "Namespace %s is a view, not a collection", ns)
	}
	return checkWritable(db, coll)
}

// StatsSource answers $collStats, $indexStats, $planCacheStats,
// $currentOp and $listLocalSessions.
func (h *aggHost) StatsSource(ctx context.Context, ns string, stage bson.Raw) (agg.Source, error) {
	src, err := h.r.statsStage(ctx, ns, stage)
	if err != nil {
		return nil, err
	}
	return src, nil
}

// randomSuffix returns a random hex string for temporary names.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sample returns n documents of src chosen uniformly at random
// (reservoir sampling), in random order, and closes src.
func sample(ctx context.Context, src agg.Source, n int64) (agg.Source, error) {
	defer src.Close()
	var res []bson.Raw
	var seen int64
	for {
		d, err := src.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		seen++
		if int64(len(res)) < n {
			res = append(res, d)
			continue
		}
		if j := randInt(seen); j < n {
			res[j] = d
		}
	}
	for i := len(res) - 1; i > 0; i-- {
		j := randInt(int64(i + 1))
		res[i], res[j] = res[j], res[i]
	}
	return agg.NewSliceSource(res), nil
}

// randInt returns a uniform random integer in [0, n).
func randInt(n int64) int64 {
	v, err := rand.Int(rand.Reader, big.NewInt(n))
	if err != nil {
		return 0
	}
	return v.Int64()
}
