package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// expander is a stage that mongod desugars into several stages; the
// pipeline parser puts those in its place, so that explain shows them
// and a leading $sort can be pushed to the query layer.
type expander interface {
	expand() []stage
}

// expand returns the stages $setWindowFields stands for: [$addFields of
// the partition key], [$sort], $_internalSetWindowFields, [$unset].
func (s *stageSetWindowFields) expand() []stage {
	out := append([]stage(nil), s.pre...)
	out = append(out, &stageWinInternal{s: s})
	if s.post != nil {
		out = append(out, s.post)
	}
	return out
}

func (s *stageSetWindowFields) open(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	return openChain(ctx, rc, in, s.expand())
}

// openChain opens stages one after the other over in.
func openChain(ctx context.Context, rc *runCtx, in Source, stages []stage) (Source, error) {
	src := in
	for _, st := range stages {
		next, err := st.open(ctx, rc, src)
		if err != nil {
			return nil, err
		}
		src = next
	}
	return src, nil
}

// stageWinInternal is $_internalSetWindowFields: the window computation
// over input already sorted by partition and sortBy.
type stageWinInternal struct {
	s *stageSetWindowFields
}

func (w *stageWinInternal) name() string { return "$_internalSetWindowFields" }

func (w *stageWinInternal) explain() bson.D {
	d := bson.D{}
	if w.s.partKey != nil {
		if p, ok := expr.FieldPath(w.s.partKey); ok {
			d = append(d, bson.E{Key: "partitionBy", Value: "$" + p})
		}
	}
	if w.s.sortBy != nil {
		d = append(d, bson.E{Key: "sortBy", Value: w.s.sortBy.spec})
	}
	d = append(d, bson.E{Key: "output", Value: w.s.outSpec})
	return bson.D{{Key: "$_internalSetWindowFields", Value: d}}
}

func (w *stageWinInternal) deps(d *depSet) bool { return w.s.deps(d) }

func (w *stageWinInternal) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	r := &winRun{s: w.s, in: in, ctx: rc.exprCtx(), mem: &winMemory{limit: limit(rc.opts.Limits.SetWindowFields)}, st: rc.st,
		disk: rc.opts.AllowDiskUse, tempDir: rc.opts.TempDir}
	return &funcSource{next: r.next, close: func() { r.release(); in.Close() }}, nil
}

// winRun is one run of $setWindowFields over sorted input: it buffers a
// partition, starts each function over it, and returns its documents
// with the outputs added.
type winRun struct {
	s   *stageSetWindowFields
	in  Source
	ctx *expr.Ctx
	mem *winMemory
	st  *stageStats

	disk    bool   // allowDiskUse: spill a partition past the limit
	tempDir string // where spill files go

	pending bson.Raw // the first document of the next partition
	pendKey bson.RawValue
	eof     bool
	part    *winPartition
	cursors []winCursor
	i       int
	keyCtx  *expr.Ctx
}

// partitionKey evaluates the partition key of doc: missing counts as
// null, an array is an error (TypeMismatch).
func (w *winRun) partitionKey(doc bson.Raw) (bson.RawValue, error) {
	if w.s.partKey == nil {
		return bson.RawValue{}, nil
	}
	if w.keyCtx == nil {
		w.keyCtx = &expr.Ctx{Vars: append([]bson.RawValue(nil), w.ctx.Vars...), Now: w.ctx.Now, ClusterTime: w.ctx.ClusterTime, Collation: w.ctx.Collation}
	}
	w.keyCtx.SetRoot(doc)
	v, err := w.s.partKey.Eval(w.keyCtx)
	if err != nil {
		return bson.RawValue{}, err
	}
	if v.Type == 0 {
		v = expr.Null()
	}
	if v.Type == bson.TypeArray {
		return bson.RawValue{}, mongoerr.New(mongoerr.TypeMismatch, "Cannot 'partitionBy' an expression of type array")
	}
	return v, nil
}

// fill reads the next partition; it reports false at the end of the
// input. Documents past the memory limit go to a spill file when
// allowDiskUse is set (5643011 otherwise).
func (w *winRun) fill(ctx context.Context) (bool, error) {
	w.release()
	w.mem.reset()
	w.part = &winPartition{ctx: w.ctx, sort: w.s.sortBy, mem: w.mem}
	if w.s.sortBy == nil {
		w.part.sort = &winSort{}
	}
	var key bson.RawValue
	add := func(d bson.Raw) error {
		p := w.part
		if p.spill != nil {
			return p.spill.add(d)
		}
		p.docs = append(p.docs, d)
		if !w.mem.addDoc(docSize(d)) {
			return nil
		}
		if !w.disk {
			return errNoSpill()
		}
		sp, err := newWinSpill(w.tempDir)
		if err != nil {
			return err
		}
		p.spill = sp
		if w.st != nil {
			w.st.usedDisk = true
			w.st.spills++
		}
		for _, x := range p.docs {
			if err := sp.add(x); err != nil {
				return err
			}
		}
		w.mem.reset()
		p.docs = nil
		return nil
	}
	if w.pending != nil {
		key = w.pendKey
		if err := add(w.pending); err != nil {
			return false, err
		}
		w.pending = nil
	}
	for !w.eof {
		d, err := w.in.Next(ctx)
		if err != nil {
			return false, err
		}
		if d == nil {
			w.eof = true
			break
		}
		k, err := w.partitionKey(d)
		if err != nil {
			return false, err
		}
		if w.part.len() > 0 && bsonkit.CompareWith(k, key, w.ctx.Collation) != 0 {
			w.pending, w.pendKey = d, k
			break
		}
		key = k
		if err := add(d); err != nil {
			return false, err
		}
	}
	if w.part.spill != nil {
		if err := w.part.spill.finish(); err != nil {
			return false, err
		}
	}
	if w.part.len() == 0 {
		return false, nil
	}
	w.cursors = w.cursors[:0]
	for _, o := range w.s.outputs {
		c, err := o.fn.start(w.part)
		if err != nil {
			return false, err
		}
		w.cursors = append(w.cursors, c)
	}
	w.i = 0
	return true, nil
}

// release removes the spill file of the partition that ended.
func (w *winRun) release() {
	if w.part != nil {
		w.part.spill.close()
		w.part.spill = nil
	}
}

func (w *winRun) next(ctx context.Context) (bson.Raw, error) {
	if w.part == nil || w.i >= w.part.len() {
		ok, err := w.fill(ctx)
		if err != nil || !ok {
			w.release()
			w.note()
			return nil, err
		}
	}
	i := w.i
	w.i++
	doc, err := w.part.doc(i)
	if err != nil {
		return nil, err
	}
	if w.s.setter == nil {
		return doc, nil
	}
	for k, c := range w.cursors {
		v, err := c(i)
		if err != nil {
			return nil, err
		}
		w.ctx.Set(w.s.outputs[k].slot, v)
	}
	return w.s.setter.apply(w.ctx, doc)
}

// note records the memory figures explain shows.
func (w *winRun) note() {
	if w.st != nil && w.mem.max > 0 {
		w.st.extra = bson.D{{Key: "maxTotalMemoryUsageBytes", Value: w.mem.max}}
	}
}
