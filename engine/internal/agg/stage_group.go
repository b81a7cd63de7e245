package agg

import (
	"bufio"
	"container/heap"
	"context"
	"io"
	"os"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$group", 0, parseGroup) }

// stageGroup is {$group: {_id: expr, field: {$acc: arg}, …}}: one output
// document per distinct _id value (compared as BSON values, so 1, 1.0
// and NumberLong(1) are one group), in first-seen order.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/group/
type stageGroup struct {
	spec   bson.Raw
	id     expr.Expr
	fields []string
	accs   []*accumSpec
	dep    expr.Deps
}

// parseGroup parses $group: 15947 for a non-document, 15955 without _id,
// 15948 for a second _id, and the accumulator codes.
func parseGroup(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.Code(15947), "a group's fields must be specified in an object")
	}
	return newGroup(pc, doc)
}

func newGroup(pc *parseCtx, doc bson.Raw) (*stageGroup, error) {
	s := &stageGroup{spec: doc}
	for _, el := range mustElems(doc) {
		k := el.Key()
		if k == "_id" {
			if s.id != nil {
				return nil, mongoerr.New(mongoerr.Code(15948), "a group's _id may only be specified once")
			}
			v := el.Value()
			var err error
			if d, ok := v.DocumentOK(); ok && !isExprDoc(v) {
				s.id, err = expr.ParseObjectDeps(d, pc.scope, &s.dep)
			} else {
				s.id, err = pc.parseExpr(v, &s.dep)
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		a, err := parseAccumField(pc, k, el.Value())
		if err != nil {
			return nil, err
		}
		s.fields = append(s.fields, k)
		s.accs = append(s.accs, a)
		s.dep.Paths = append(s.dep.Paths, a.deps.Paths...)
		s.dep.Whole = s.dep.Whole || a.deps.Whole
	}
	if s.id == nil {
		return nil, mongoerr.New(mongoerr.Code(15955), "a group specification must include an _id")
	}
	return s, nil
}

func (s *stageGroup) name() string { return "$group" }
func (s *stageGroup) explain() bson.D {
	return bson.D{{Key: "$group", Value: explainGroupSpec(s.spec)}}
}

func (s *stageGroup) deps(d *depSet) bool {
	d.addExpr(&s.dep)
	return true
}

// group is one group's state.
type group struct {
	id   bson.RawValue
	accs []accumulator
	mem  int64
}

// groupRun is the state of one run of a $group.
type groupRun struct {
	s      *stageGroup
	rc     *runCtx
	c, nc  *expr.Ctx
	groups map[string]*group
	keys   []string
	kbuf   []byte // the current document's group key, reused
	bytes  int64
	limit  int64
	runs   []*os.File
}

func (s *stageGroup) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	g := &groupRun{s: s, rc: rc, c: rc.exprCtx(), nc: rc.exprCtx(), groups: map[string]*group{}, limit: limit(rc.opts.Limits.Group)}
	st := rc.st
	var out Source
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if out == nil {
			var err error
			if out, err = g.consume(ctx, in, st); err != nil {
				return nil, err
			}
		}
		return out.Next(ctx)
	}, close: func() {
		in.Close()
		if out != nil {
			out.Close()
		}
		g.closeRuns()
	}}, nil
}

// newAccs makes a group's accumulators. As in mongod's
// GroupProcessorBase::findOrCreateGroup, 'n' arguments are evaluated
// against the group key itself when it is a document (so "$gameId" reads
// the key's gameId field) and against an empty document otherwise.
func (g *groupRun) newAccs(id bson.RawValue) ([]accumulator, error) {
	root, ok := id.DocumentOK()
	if !ok {
		root = expr.NewDocBuilder().Doc()
	}
	g.nc.SetRoot(root)
	accs := make([]accumulator, len(g.s.accs))
	for i, a := range g.s.accs {
		acc, err := a.make(g.nc)
		if err != nil {
			return nil, err
		}
		accs[i] = acc
	}
	return accs, nil
}

// idOf evaluates the group key of the document in c.
func (g *groupRun) idOf() (bson.RawValue, error) {
	v, err := g.s.id.Eval(g.c)
	if err != nil {
		return v, err
	}
	if v.Type == 0 {
		v = expr.Null()
	}
	return v, nil
}

func (g *groupRun) consume(ctx context.Context, in Source, st *stageStats) (Source, error) {
	for {
		d, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		g.c.SetRoot(d)
		id, err := g.idOf()
		if err != nil {
			return nil, err
		}
		g.kbuf = appendKeyWith(g.kbuf[:0], id, 0, g.c.Collation)
		gr := g.groups[string(g.kbuf)]
		if gr == nil {
			k := string(g.kbuf)
			accs, err := g.newAccs(id)
			if err != nil {
				return nil, err
			}
			gr = &group{id: id, accs: accs, mem: int64(len(k)) + valueSize(id) + 64}
			g.groups[k] = gr
			g.keys = append(g.keys, k)
			g.bytes += gr.mem
		}
		for _, a := range gr.accs {
			m0 := a.memory()
			if err := a.process(g.c); err != nil {
				return nil, err
			}
			g.bytes += a.memory() - m0
		}
		if g.bytes > g.limit {
			g.noteMemory(st)
			if !g.rc.opts.AllowDiskUse {
				return nil, mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
					"Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.")
			}
			if err := g.spill(st); err != nil {
				return nil, err
			}
		}
	}
	if len(g.runs) == 0 {
		g.noteMemory(st)
		out := make([]bson.Raw, 0, len(g.keys))
		var size int64
		for _, k := range g.keys {
			d, err := g.output(g.groups[k])
			if err != nil {
				return nil, err
			}
			out = append(out, d)
			size += int64(len(d))
		}
		if st != nil {
			st.extra = append(st.extra, bson.E{Key: "totalOutputDataSizeBytes", Value: size})
		}
		g.groups, g.keys = nil, nil
		return NewSliceSource(out), nil
	}
	if len(g.keys) > 0 {
		if err := g.spill(st); err != nil {
			return nil, err
		}
	}
	return g.mergeRuns()
}

// noteMemory records, for explain, the memory each accumulator holds
// across the groups in memory (mongod's maxAccumulatorMemoryUsageBytes).
func (g *groupRun) noteMemory(st *stageStats) {
	if st == nil {
		return
	}
	mem := make([]int64, len(g.s.accs))
	for _, gr := range g.groups {
		for i, a := range gr.accs {
			mem[i] += a.memory()
		}
	}
	d := bson.D{}
	for i, f := range g.s.fields {
		if mem[i] > st.maxAcc(f) {
			st.setMaxAcc(f, mem[i])
		}
		d = append(d, bson.E{Key: f, Value: st.maxAcc(f)})
	}
	st.extra = bson.D{{Key: "maxAccumulatorMemoryUsageBytes", Value: d}}
}

// output builds a group's result document.
func (g *groupRun) output(gr *group) (bson.Raw, error) {
	b := expr.NewDocBuilder()
	b.Append("_id", gr.id)
	for i, a := range gr.accs {
		v, err := a.result()
		if err != nil {
			return nil, err
		}
		b.Append(g.s.fields[i], v)
	}
	if err := checkSize(b); err != nil {
		return nil, err
	}
	return b.Doc(), nil
}

// spill writes the groups, sorted by key, to a run file of
// {k, id, p: [partial…]} documents.
func (g *groupRun) spill(st *stageStats) error {
	sort.Strings(g.keys)
	f, err := os.CreateTemp(g.rc.opts.TempDir, "formwork-group-*.run")
	if err != nil {
		return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
	}
	os.Remove(f.Name())
	w := bufio.NewWriter(f)
	for _, k := range g.keys {
		gr := g.groups[k]
		ps := make([]bson.RawValue, len(gr.accs))
		for i, a := range gr.accs {
			if ps[i], err = a.partial(); err != nil {
				f.Close()
				return err
			}
		}
		b := expr.NewDocBuilder()
		b.Append("k", bson.RawValue{Type: bson.TypeBinary, Value: binValue([]byte(k))})
		b.Append("id", gr.id)
		b.Append("p", expr.Array(ps))
		if _, err := w.Write(b.Doc()); err != nil {
			f.Close()
			return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
	}
	g.runs = append(g.runs, f)
	g.groups, g.keys, g.bytes = map[string]*group{}, nil, 0
	if st != nil {
		st.usedDisk = true
		st.spills++
	}
	return nil
}

// binValue encodes a generic binary value's bytes.
func binValue(b []byte) []byte {
	out := make([]byte, 0, len(b)+5)
	n := len(b)
	out = append(out, byte(n), byte(n>>8), byte(n>>16), byte(n>>24), 0)
	return append(out, b...)
}

func (g *groupRun) closeRuns() {
	for _, f := range g.runs {
		f.Close()
	}
	g.runs = nil
}

// groupRunHeap merges group runs by key; ties go to the earlier run so
// $first/$last and $push keep input order.
type groupRunHeap struct{ rs []*runReader }

func runKey(r *runReader) string {
	_, data := r.cur.Lookup("k").Binary()
	return string(data)
}

func (h *groupRunHeap) Len() int { return len(h.rs) }
func (h *groupRunHeap) Less(i, j int) bool {
	a, b := runKey(h.rs[i]), runKey(h.rs[j])
	if a != b {
		return a < b
	}
	return h.rs[i].idx < h.rs[j].idx
}
func (h *groupRunHeap) Swap(i, j int) { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *groupRunHeap) Push(x any)    { h.rs = append(h.rs, x.(*runReader)) }
func (h *groupRunHeap) Pop() any {
	n := len(h.rs) - 1
	r := h.rs[n]
	h.rs = h.rs[:n]
	return r
}

// mergeRuns merges the spilled runs, folding the partials of equal keys.
func (g *groupRun) mergeRuns() (Source, error) {
	h := &groupRunHeap{}
	for i, f := range g.runs {
		r := &runReader{r: bufio.NewReader(f), idx: i}
		if err := r.advance(); err != nil {
			return nil, err
		}
		if r.cur != nil {
			h.rs = append(h.rs, r)
		}
	}
	heap.Init(h)
	next := func(ctx context.Context) (bson.Raw, error) {
		if h.Len() == 0 {
			return nil, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k := runKey(h.rs[0])
		var gr *group
		for h.Len() > 0 && runKey(h.rs[0]) == k {
			r := h.rs[0]
			if gr == nil {
				id := r.cur.Lookup("id")
				accs, err := g.newAccs(id)
				if err != nil {
					return nil, err
				}
				gr = &group{id: id, accs: accs}
			}
			ps := expr.Values(r.cur.Lookup("p"))
			for i, a := range gr.accs {
				if i < len(ps) {
					if err := a.merge(ps[i]); err != nil {
						return nil, err
					}
				}
			}
			if err := r.advance(); err != nil {
				return nil, err
			}
			if r.cur == nil {
				heap.Pop(h)
			} else {
				heap.Fix(h, 0)
			}
		}
		return g.output(gr)
	}
	return &funcSource{next: next, close: g.closeRuns}, nil
}
