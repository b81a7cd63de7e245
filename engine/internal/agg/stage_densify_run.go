package agg

import (
	"context"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// densifyPart is one partition's state: its fields as a document and the
// last value on the step it reached.
type densifyPart struct {
	key  bson.Raw
	cur  bson.RawValue
	seen bool
}

// densifyGen generates the values from next (inclusive) to stop
// (exclusive) for a partition.
type densifyGen struct {
	part *densifyPart
	next bson.RawValue
	stop bson.RawValue
}

// densifyRun is one run of $densify over its sorted input.
type densifyRun struct {
	s     *stageDensify
	in    Source
	ctx   *expr.Ctx
	parts map[string]*densifyPart
	list  []*densifyPart
	mem   int64
	limit int64

	gen       *densifyGen
	queued    bson.Raw
	queuedFor *densifyPart
	queuedVal bson.RawValue

	generated, max       int64
	globalMin, globalMax bson.RawValue
	eof                  bool
	finish               int
	stopFull             bson.RawValue // where "full" bounds stop after the input
}

// expand returns the stages $densify stands for: $sort, then
// $_internalDensify.
func (s *stageDensify) expand() []stage {
	return []stage{s.sort, &stageDensifyInternal{s: s}}
}

func (s *stageDensify) open(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	return openChain(ctx, rc, in, s.expand())
}

// stageDensifyInternal is $_internalDensify: the densification of input
// already sorted.
type stageDensifyInternal struct {
	s *stageDensify
}

func (d *stageDensifyInternal) name() string { return "$_internalDensify" }

func (d *stageDensifyInternal) explain() bson.D {
	parts := bson.A{}
	for _, p := range d.s.parts {
		parts = append(parts, p)
	}
	rng := bson.D{{Key: "step", Value: d.s.step}}
	switch d.s.bounds {
	case densifyFull:
		rng = append(rng, bson.E{Key: "bounds", Value: "full"})
	case densifyPartition:
		rng = append(rng, bson.E{Key: "bounds", Value: "partition"})
	default:
		rng = append(rng, bson.E{Key: "bounds", Value: bson.A{d.s.lo, d.s.hi}})
	}
	if d.s.unit != "" {
		rng = append(rng, bson.E{Key: "unit", Value: d.s.unit})
	}
	return bson.D{{Key: "$_internalDensify", Value: bson.D{{Key: "field", Value: d.s.field}, {Key: "partitionByFields", Value: parts}, {Key: "range", Value: rng}}}}
}

func (d *stageDensifyInternal) deps(ds *depSet) bool { return d.s.deps(ds) }

func (d *stageDensifyInternal) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	s := d.s
	max := rc.opts.Limits.DensifyDocs
	if max <= 0 {
		max = DefaultDensifyDocs
	}
	r := &densifyRun{s: s, in: in, ctx: expr.NewCtx(s.scope), parts: map[string]*densifyPart{}, max: max, limit: DefaultLimit}
	r.ctx.Collation = rc.opts.Collation
	return &funcSource{next: r.next, close: in.Close}, nil
}

// arith applies a compiled binary expression to a and b.
func (r *densifyRun) arith(e expr.Expr, a, b bson.RawValue) (bson.RawValue, error) {
	r.ctx.Set(r.s.slotA, a)
	r.ctx.Set(r.s.slotB, b)
	return e.Eval(r.ctx)
}

// step moves v by sign steps: $add / $subtract for numbers, the unit for
// dates.
func (r *densifyRun) step(v bson.RawValue, sign int64) (bson.RawValue, error) {
	if r.s.unit != "" {
		n, _ := bsonkit.ExactInt64(r.s.step)
		ms, ok := dateAdd(v.DateTime(), r.s.unit, n*sign)
		if !ok {
			return bson.RawValue{}, mongoerr.New(mongoerr.Overflow, "date overflow in $densify")
		}
		return expr.Date(ms), nil
	}
	if sign > 0 {
		return r.arith(r.s.add, v, r.s.step)
	}
	return r.arith(r.s.sub, v, r.s.step)
}

// onStep reports whether v is a whole number of steps from base.
func (r *densifyRun) onStep(v, base bson.RawValue) (bool, error) {
	if r.s.unit == "" {
		d, err := r.arith(r.s.sub, v, base)
		if err != nil {
			return false, err
		}
		m, err := r.arith(r.s.mod, d, r.s.step)
		if err != nil {
			return false, err
		}
		f, _ := bsonkit.Float64(m)
		return f == 0, nil
	}
	switch r.s.unit {
	case "month", "quarter", "year":
		cur := base
		for i := 0; bsonkit.Compare(cur, v) < 0; i++ {
			if i > 1<<20 {
				return false, nil
			}
			var err error
			if cur, err = r.step(cur, 1); err != nil {
				return false, err
			}
		}
		return bsonkit.Compare(cur, v) == 0, nil
	}
	per, _ := timeUnitMillis(r.s.unit)
	n, _ := bsonkit.ExactInt64(r.s.step)
	d := v.DateTime() - base.DateTime()
	return per*n != 0 && d%(per*n) == 0, nil
}

// partition returns doc's partition, creating it on first sight (6007200
// past the memory limit of the partition table).
func (r *densifyRun) partition(doc bson.Raw) (*densifyPart, error) {
	if len(r.s.parts) == 0 {
		if len(r.list) == 0 {
			r.list = append(r.list, &densifyPart{key: newEmptyDoc()})
		}
		return r.list[0], nil
	}
	key := newEmptyDoc()
	r.ctx.SetRoot(doc)
	for i, e := range r.s.partExprs {
		v, err := e.Eval(r.ctx)
		if err != nil {
			return nil, err
		}
		if v.Type == 0 {
			continue
		}
		if key, err = densifySet(key, strings.Split(r.s.parts[i], "."), v, false); err != nil {
			return nil, err
		}
	}
	ck := canonKey(expr.Doc(key))
	if r.ctx.Collation != nil {
		// mongod's partition table compares values under the collation.
		ck = keyOfWith(expr.Doc(key), r.ctx.Collation)
	}
	if p, ok := r.parts[ck]; ok {
		return p, nil
	}
	p := &densifyPart{key: key}
	r.parts[ck] = p
	r.list = append(r.list, p)
	r.mem += int64(len(ck)+len(key)) + 64
	if r.mem > r.limit {
		return nil, mongoerr.Newf(mongoerr.Code(6007200), "$densify exceeded memory limit of %d", r.limit)
	}
	return p, nil
}

// newEmptyDoc returns a new empty document.
func newEmptyDoc() bson.Raw { return bson.Raw{5, 0, 0, 0, 0} }

// value returns doc's densify value; ok is false when it is null or
// missing (the document passes through). Other types fail with 5733201,
// a number with a unit or a date without one with 6053600.
func (r *densifyRun) value(doc bson.Raw) (bson.RawValue, bool, error) {
	r.ctx.SetRoot(doc)
	v, err := r.s.fieldExpr.Eval(r.ctx)
	if err != nil {
		return v, false, err
	}
	if expr.IsNullish(v) {
		return v, false, nil
	}
	if !bsonkit.IsNumber(v.Type) && v.Type != bson.TypeDateTime {
		return v, false, mongoerr.New(mongoerr.Code(5733201), "Densify field type must be numeric or a date")
	}
	if r.s.unit != "" && v.Type != bson.TypeDateTime {
		return v, false, mongoerr.New(mongoerr.Code(6053600), "Encountered numeric densify value in collection when step has a date unit.")
	}
	if r.s.unit == "" && v.Type == bson.TypeDateTime {
		return v, false, mongoerr.New(mongoerr.Code(6053600), "Encountered date densify value in collection when step does not have a date unit.")
	}
	return v, true, nil
}

func (r *densifyRun) next(ctx context.Context) (bson.Raw, error) {
	for {
		if r.generated > r.max {
			return nil, mongoerr.Newf(mongoerr.Code(5897900), "Generated %d documents in $densify, which is over the limit of %d. Increase the 'internalQueryMaxAllowedDensifyDocs' parameter to allow more generated documents", r.generated, r.max)
		}
		if g := r.gen; g != nil {
			if bsonkit.Compare(g.next, g.stop) < 0 {
				v := g.next
				d, err := densifySet(g.part.key, r.s.path, v, true)
				if err != nil {
					return nil, err
				}
				g.part.cur = v
				if g.next, err = r.step(v, 1); err != nil {
					return nil, err
				}
				r.generated++
				return d, nil
			}
			r.gen = nil
		}
		if r.queued != nil {
			d, p := r.queued, r.queuedFor
			r.queued, r.queuedFor = nil, nil
			if err := r.reached(p, r.queuedVal); err != nil {
				return nil, err
			}
			return d, nil
		}
		if r.eof {
			if err := r.finishNext(); err != nil || r.gen == nil {
				return nil, err
			}
			continue
		}
		d, err := r.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			r.eof = true
			if err := r.startFinish(); err != nil {
				return nil, err
			}
			continue
		}
		if out, err := r.process(d); err != nil || out != nil {
			return out, err
		}
	}
}

// reached records that partition p output a document with value v: an
// on-step value becomes the partition's current value.
func (r *densifyRun) reached(p *densifyPart, v bson.RawValue) error {
	if p.cur.Type == 0 {
		return nil
	}
	next, err := r.step(p.cur, 1)
	if err != nil {
		return err
	}
	if bsonkit.Compare(v, next) == 0 {
		p.cur = v
	}
	return nil
}

// process handles one input document: it returns it at once, or queues
// it behind the documents to generate before it.
func (r *densifyRun) process(d bson.Raw) (bson.Raw, error) {
	v, ok, err := r.value(d)
	if err != nil || !ok {
		return d, err
	}
	p, err := r.partition(d)
	if err != nil {
		return nil, err
	}
	stop := v
	switch r.s.bounds {
	case densifyFull:
		if r.globalMin.Type == 0 {
			r.globalMin = v
		}
		r.globalMax = v
		if !p.seen {
			p.seen = true
			if p.cur, err = r.step(r.globalMin, -1); err != nil {
				return nil, err
			}
		}
	case densifyPartition:
		if !p.seen {
			p.seen, p.cur = true, v
			return d, nil
		}
	case densifyExplicit:
		if !p.seen {
			p.seen = true
			if p.cur, err = r.step(r.s.lo, -1); err != nil {
				return nil, err
			}
		}
		if bsonkit.Compare(v, r.s.lo) < 0 {
			return d, nil
		}
		if bsonkit.Compare(r.s.hi, stop) < 0 {
			stop = r.s.hi
		}
	}
	next, err := r.step(p.cur, 1)
	if err != nil {
		return nil, err
	}
	switch c := bsonkit.Compare(v, next); {
	case c == 0:
		p.cur = v
		return d, nil
	case c < 0:
		return d, nil
	}
	r.gen = &densifyGen{part: p, next: next, stop: stop}
	r.queued, r.queuedFor, r.queuedVal = d, p, v
	return nil, nil
}

// startFinish prepares the documents generated after the input ends: up
// to the global maximum (inclusive when on the step) for "full" bounds
// with partitions, up to the upper bound for explicit bounds.
func (r *densifyRun) startFinish() error {
	r.finish = 0
	switch r.s.bounds {
	case densifyPartition:
		r.list = nil
	case densifyFull:
		if len(r.s.parts) == 0 || r.globalMax.Type == 0 {
			r.list = nil
			return nil
		}
		on, err := r.onStep(r.globalMax, r.globalMin)
		if err != nil {
			return err
		}
		r.stopFull = r.globalMax
		if on {
			if r.stopFull, err = r.step(r.globalMax, 1); err != nil {
				return err
			}
		}
	case densifyExplicit:
		if len(r.s.parts) == 0 && len(r.list) == 0 {
			p := &densifyPart{key: newEmptyDoc(), seen: true}
			cur, err := r.step(r.s.lo, -1)
			if err != nil {
				return err
			}
			p.cur = cur
			r.list = append(r.list, p)
		}
	}
	return nil
}

// finishStop is where the generation after the input ends stops.
func (r *densifyRun) finishStop() bson.RawValue {
	if r.s.bounds == densifyExplicit {
		return r.s.hi
	}
	return r.stopFull
}

// finishNext starts the generator of the next partition to finish, if any.
func (r *densifyRun) finishNext() error {
	for r.finish < len(r.list) {
		p := r.list[r.finish]
		r.finish++
		if !p.seen {
			continue
		}
		next, err := r.step(p.cur, 1)
		if err != nil {
			return err
		}
		if bsonkit.Compare(next, r.finishStop()) < 0 {
			r.gen = &densifyGen{part: p, next: next, stop: r.finishStop()}
			return nil
		}
	}
	return nil
}

// canonKey is a map key under which values that compare equal (1 and
// 1.0) coincide.
func canonKey(v bson.RawValue) string {
	var b strings.Builder
	writeCanon(&b, v)
	return b.String()
}

// writeCanon writes v's canonical form for canonKey.
func writeCanon(b *strings.Builder, v bson.RawValue) {
	b.WriteString(strconv.Itoa(bsonkit.CanonicalType(v.Type)))
	b.WriteByte(':')
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		if i, ok := bsonkit.ExactInt64(v); ok {
			b.WriteString(strconv.FormatInt(i, 10))
		} else {
			f, _ := bsonkit.Float64(v)
			if math.IsNaN(f) {
				b.WriteString("NaN")
			} else {
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
	case bson.TypeDecimal128:
		if i, ok := bsonkit.ExactInt64(v); ok {
			b.WriteString(strconv.FormatInt(i, 10))
		} else {
			b.WriteString(v.Decimal128().String())
		}
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		b.WriteByte('{')
		bsonkit.ForEach(v.Value, func(k string, x bson.RawValue) bool {
			if v.Type == bson.TypeEmbeddedDocument {
				b.WriteString(strconv.Quote(k))
			}
			b.WriteByte('=')
			writeCanon(b, x)
			b.WriteByte(',')
			return true
		})
		b.WriteByte('}')
	case 0, bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
	default:
		b.WriteString(strconv.Quote(string(v.Value)))
	}
}

// densifySet returns doc with the dotted path set to v, creating documents
// along the way. With generating set it fails as mongod's document
// generator does: 5733307 through an array, 5733308 through a value that
// is not a document.
func densifySet(doc bson.Raw, path []string, v bson.RawValue, generating bool) (bson.Raw, error) {
	b := expr.NewDocBuilder()
	done := false
	var err error
	bsonkit.ForEach(doc, func(k string, x bson.RawValue) bool {
		if k != path[0] || done {
			b.Append(k, x)
			return true
		}
		done = true
		if len(path) == 1 {
			b.Append(k, v)
			return true
		}
		switch {
		case x.Type == bson.TypeEmbeddedDocument:
			var sub bson.Raw
			if sub, err = densifySet(x.Document(), path[1:], v, generating); err != nil {
				return false
			}
			b.Append(k, expr.Doc(sub))
		case generating && x.Type == bson.TypeArray:
			err = mongoerr.New(mongoerr.Code(5733307), "$densify cannot generate fields nested inside arrays")
			return false
		case generating:
			err = mongoerr.New(mongoerr.Code(5733308), "$densify cannot overwrite non-object values with objects")
			return false
		default:
			sub, _ := densifySet(newEmptyDoc(), path[1:], v, false)
			b.Append(k, expr.Doc(sub))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if !done {
		if len(path) == 1 {
			b.Append(path[0], v)
		} else {
			sub, err := densifySet(newEmptyDoc(), path[1:], v, generating)
			if err != nil {
				return nil, err
			}
			b.Append(path[0], expr.Doc(sub))
		}
	}
	return b.Doc(), nil
}
