package command

import (
	"context"
	"errors"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// buildState is the index build a createIndexes runs, for currentOp.
type buildState struct {
	b atomic.Pointer[storage.IndexBuild]
}

// buildsByRequest maps a running createIndexes request to its build. It
// is per Env (envBuilds) so that two engines in one process never meet.
type buildsByRequest struct {
	m atomicMap
}

// atomicMap is a small concurrent map of *Request → *buildState.
type atomicMap struct {
	v atomic.Pointer[map[*Request]*buildState]
}

// runIndexBuild builds specs on ns as mongod's hybrid builds do: it
// decides under the write lock what to build (creating the collection
// when needed), scans a snapshot without the lock while other writes
// proceed, then takes the lock again to apply the writes made meanwhile,
// check uniqueness and publish. killOp and maxTimeMS interrupt the scan;
// currentOp shows its progress. It returns the index counts before and
// after and whether it created the collection.
// https://www.mongodb.com/docs/manual/core/index-creation/
func runIndexBuild(ctx context.Context, r *Request, ns string, specs []index.Spec) (before, after int, created bool, err error) {
	// Starting a build on an existing collection waits behind the open
	// transactions holding its documents, as mongod's exclusive lock at
	// a build's start does.
	var build *storage.IndexBuild
	err = r.Env.Store.RetryExclusive(ctx, func() error {
		var err error
		build, err = r.Env.Store.BeginIndexBuild(r.prepareBuild(ns, specs, &before, &created))
		return err
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, 0, false, ctxErr(err)
	}
	if err != nil {
		return 0, 0, false, writeErr(err)
	}
	if build == nil {
		return before, before, created, nil
	}
	st := r.Env.trackBuild(r, build)
	defer r.Env.untrackBuild(r, st)
	if err := build.Run(ctx); err != nil {
		build.Abort()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, 0, false, ctxErr(err)
		}
		return 0, 0, false, writeErr(err)
	}
	c, err := build.Commit(func(c *storage.Collection, ixs []*storage.Index) ([]bool, error) {
		keep := make([]bool, len(ixs))
		n := len(c.Indexes)
		for i, ix := range ixs {
			exists, err := indexConflict(c, ix.Def.Spec())
			if err != nil {
				return nil, err
			}
			keep[i] = !exists
			if keep[i] {
				n++
			}
		}
		if n > maxIndexes {
			return nil, mongoerr.Newf(mongoerr.CannotCreateIndex, "add index fails, too many indexes for %s", ns)
		}
		return keep, nil
	})
	if err != nil {
		return 0, 0, false, writeErr(err)
	}
	return before, len(c.Indexes), created, nil
}

// specsToBuild returns the specs that c does not have yet, after checking
// each against c's indexes and the request's earlier specs for name and
// key conflicts and against the index limit.
func specsToBuild(c *storage.Collection, specs []index.Spec) ([]index.Spec, error) {
	var todo []index.Spec
	for _, sp := range specs {
		sp = inheritCollation(c, sp)
		exists, err := indexConflict(c, sp)
		if err != nil {
			return nil, err
		}
		if exists {
			continue
		}
		dup := false
		for _, o := range todo {
			if o.Name != sp.Name {
				continue
			}
			if !sameKey(o.Key, sp.Key) || !sameOptions(o, sp) {
				return nil, mongoerr.Newf(mongoerr.IndexKeySpecsConflict, "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s", formatDoc(sp.Doc()), formatDoc(o.Doc()))
			}
			dup = true
		}
		if dup {
			continue
		}
		if len(c.Indexes)+len(todo) >= maxIndexes {
			return nil, mongoerr.Newf(mongoerr.CannotCreateIndex, "add index fails, too many indexes for %s key:%s", c.NS, formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: sp.Key}))
		}
		todo = append(todo, sp)
	}
	return todo, nil
}

// trackBuild makes build visible to currentOp as r's progress.
func (e *Env) trackBuild(r *Request, build *storage.IndexBuild) *buildState {
	st := &buildState{}
	st.b.Store(build)
	e.builds.update(func(m map[*Request]*buildState) { m[r] = st })
	return st
}

// untrackBuild removes r's build from currentOp.
func (e *Env) untrackBuild(r *Request, st *buildState) {
	e.builds.update(func(m map[*Request]*buildState) { delete(m, r) })
}

// update replaces the map with a changed copy.
func (b *buildsByRequest) update(fn func(map[*Request]*buildState)) {
	for {
		old := b.m.v.Load()
		next := map[*Request]*buildState{}
		if old != nil {
			for k, v := range *old {
				next[k] = v
			}
		}
		fn(next)
		if b.m.v.CompareAndSwap(old, &next) {
			return
		}
	}
}

// buildFields returns the currentOp fields of r's index build, if it runs
// one: msg and progress {done, total}, as mongod reports a build's
// collection scan.
func (e *Env) buildFields(r *Request) bson.D {
	m := e.builds.m.v.Load()
	if m == nil {
		return nil
	}
	st := (*m)[r]
	if st == nil {
		return nil
	}
	b := st.b.Load()
	if b == nil {
		return nil
	}
	done, total := b.Progress()
	return bson.D{
		{Key: "msg", Value: "Index Build: scanning collection"},
		{Key: "progress", Value: bson.D{{Key: "done", Value: done}, {Key: "total", Value: total}}},
	}
}

// prepareBuild is runIndexBuild's BeginIndexBuild step: it waits (through
// storage.Writer.Exclusive) for transactions holding ns, creates ns when
// missing and picks the specs still to build, noting the index count
// before and whether it created the collection.
func (r *Request) prepareBuild(ns string, specs []index.Spec, before *int, created *bool) func(w *storage.Writer) (string, []index.Spec, error) {
	return func(w *storage.Writer) (string, []index.Spec, error) {
		if err := w.Exclusive(lockNS(ns)); err != nil {
			return "", nil, err
		}
		c := w.Collection(ns)
		if c == nil {
			var err error
			if c, err = w.CreateCollection(ns, nil); err != nil {
				return "", nil, err
			}
			*created = true
		}
		*before = len(c.Indexes)
		todo, err := specsToBuild(c, specs)
		return ns, todo, err
	}
}
