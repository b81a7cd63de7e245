package agg

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/engine/internal/update"
)

// fakeHost is an in-memory Host: a map of collections with naive
// filtering, a unique index on _id plus any declared ones, and the update
// package for writes. Tests only.
type fakeHost struct {
	colls   map[string][]bson.Raw
	uniques map[string][][]string
	opens   int // Open calls, to bound fuzzing
}

func newFakeHost() *fakeHost {
	return &fakeHost{colls: map[string][]bson.Raw{}, uniques: map[string][][]string{}}
}

func (h *fakeHost) Open(ctx context.Context, ns string, q Query) (Source, error) {
	h.opens++
	docs := h.colls[ns]
	var out []bson.Raw
	if len(q.Filter) > 0 {
		f, c, err := NewFilter(q.Filter, q.Let, q.Collation)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			ok, err := f.Match(c, d)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, d)
			}
		}
	} else {
		out = slices.Clone(docs)
	}
	if len(q.Sort) > 0 {
		o, err := order.Compile(q.Sort)
		if err != nil {
			return nil, err
		}
		sort.SliceStable(out, func(i, j int) bool { return o.Compare(out[i], out[j]) < 0 })
	}
	if q.Skip > 0 {
		if q.Skip >= int64(len(out)) {
			out = nil
		} else {
			out = out[q.Skip:]
		}
	}
	if q.Limit > 0 && q.Limit < int64(len(out)) {
		out = out[:q.Limit]
	}
	if q.Sample > 0 && q.Sample < int64(len(out)) {
		out = out[:q.Sample]
	}
	if q.Fields != nil {
		proj := make([]bson.Raw, len(out))
		for i, d := range out {
			proj[i] = keepFields(d, q.Fields)
		}
		out = proj
	}
	return NewSliceSource(out), nil
}

// keepFields projects d to the dotted paths (an inclusion without the
// implicit _id).
func keepFields(d bson.Raw, paths []string) bson.Raw {
	b := expr.NewDocBuilder()
	for _, el := range mustElems(d) {
		var sub []string
		keep := false
		for _, p := range paths {
			head, rest, dotted := strings.Cut(p, ".")
			if head != el.Key() {
				continue
			}
			if !dotted {
				keep = true
			} else {
				sub = append(sub, rest)
			}
		}
		v := el.Value()
		switch {
		case keep:
			b.Append(el.Key(), v)
		case sub != nil && v.Type == bson.TypeEmbeddedDocument:
			b.Append(el.Key(), expr.Doc(keepFields(v.Document(), sub)))
		case sub != nil && v.Type == bson.TypeArray:
			ab := expr.NewArrayBuilder(0)
			for _, x := range expr.Values(v) {
				if x.Type == bson.TypeEmbeddedDocument {
					ab.Append(expr.Doc(keepFields(x.Document(), sub)))
				} else if x.Type == bson.TypeArray {
					ab.Append(x)
				}
			}
			b.Append(el.Key(), ab.Value())
		}
	}
	return b.Doc()
}

// dupKey checks d against ns's unique indexes, skipping the document at
// index skip.
func (h *fakeHost) dupKey(ns string, d bson.Raw, skip int) error {
	keys := append([][]string{{"_id"}}, h.uniques[ns]...)
	for i, other := range h.colls[ns] {
		if i == skip {
			continue
		}
		for _, k := range keys {
			same := true
			for _, f := range k {
				a, _ := bsonkit.LookupDoc(d, strings.Split(f, "."))
				b, _ := bsonkit.LookupDoc(other, strings.Split(f, "."))
				if a.Type == 0 {
					a = expr.Null()
				}
				if b.Type == 0 {
					b = expr.Null()
				}
				if !bsonkit.Equal(a, b) {
					same = false
					break
				}
			}
			if same {
				return mongoerr.Newf(mongoerr.DuplicateKey, "E11000 duplicate key error collection: %s index: %s dup key", ns, strings.Join(k, "_1_")+"_1")
			}
		}
	}
	return nil
}

// withID returns d with an _id first, generating one when missing.
func withID(d bson.Raw) bson.Raw {
	if _, err := d.LookupErr("_id"); err == nil {
		return d
	}
	b := expr.NewDocBuilder()
	b.Append("_id", expr.ObjectID(bson.NewObjectID()))
	for _, el := range mustElems(d) {
		b.Append(el.Key(), el.Value())
	}
	return b.Doc()
}

func (h *fakeHost) Insert(ctx context.Context, ns string, docs []bson.Raw) error {
	for _, d := range docs {
		d = withID(d)
		if err := h.dupKey(ns, d, -1); err != nil {
			return err
		}
		h.colls[ns] = append(h.colls[ns], d)
	}
	return nil
}

func (h *fakeHost) Update(ctx context.Context, ns string, q, u bson.RawValue, let bson.Raw, upsert, multi bool) (int64, bool, error) {
	f, c, err := NewFilter(q.Document(), let, nil)
	if err != nil {
		return 0, false, err
	}
	apply := func(d bson.Raw) (bson.Raw, error) {
		if u.Type == bson.TypeArray {
			var stages []bson.Raw
			for _, v := range expr.Values(u) {
				stages = append(stages, v.Document())
			}
			up, err := ParseUpdatePipeline(stages, let)
			if err != nil {
				return nil, err
			}
			return up.Apply(ctx, d)
		}
		up, err := update.Compile(u, nil)
		if err != nil {
			return nil, err
		}
		out, _, err := up.Apply(d, -1, time.Now())
		return out, err
	}
	var matched int64
	for i, d := range h.colls[ns] {
		ok, err := f.Match(c, d)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			continue
		}
		matched++
		nd, err := apply(d)
		if err != nil {
			return 0, false, err
		}
		if err := h.dupKey(ns, nd, i); err != nil {
			return 0, false, err
		}
		h.colls[ns][i] = nd
		if !multi {
			break
		}
	}
	if matched > 0 || !upsert {
		return matched, false, nil
	}
	var nd bson.Raw
	if u.Type == bson.TypeArray {
		seed, err := apply(equalitySeed(q.Document()))
		if err != nil {
			return 0, false, err
		}
		nd = seed
	} else {
		up, err := update.Compile(u, nil)
		if err != nil {
			return 0, false, err
		}
		if nd, err = up.Upsert(q.Document(), time.Now()); err != nil {
			return 0, false, err
		}
	}
	nd = withID(nd)
	if err := h.dupKey(ns, nd, -1); err != nil {
		return 0, false, err
	}
	h.colls[ns] = append(h.colls[ns], nd)
	return 0, true, nil
}

// equalitySeed keeps the top-level equality fields of a filter.
func equalitySeed(q bson.Raw) bson.Raw {
	b := expr.NewDocBuilder()
	for _, el := range mustElems(q) {
		if !strings.HasPrefix(el.Key(), "$") && !isExprDoc(el.Value()) {
			b.Append(el.Key(), el.Value())
		}
	}
	return b.Doc()
}

func (h *fakeHost) UniqueIndexOn(ctx context.Context, ns string, fields []string) (bool, error) {
	want := slices.Clone(fields)
	sort.Strings(want)
	for _, k := range append([][]string{{"_id"}}, h.uniques[ns]...) {
		have := slices.Clone(k)
		sort.Strings(have)
		if slices.Equal(have, want) {
			return true, nil
		}
	}
	return false, nil
}

func (h *fakeHost) ReplaceCollection(ctx context.Context, ns string, docs Source) error {
	all, err := drain(ctx, docs)
	if err != nil {
		return err
	}
	tmp := &fakeHost{colls: map[string][]bson.Raw{}, uniques: h.uniques}
	if err := tmp.Insert(ctx, ns, all); err != nil {
		return err
	}
	h.colls[ns] = tmp.colls[ns]
	return nil
}

func (h *fakeHost) StatsSource(ctx context.Context, ns string, stage bson.Raw) (Source, error) {
	name := mustElems(stage)[0].Key()
	b := expr.NewDocBuilder()
	b.Append("ns", expr.String(ns))
	b.Append("stage", expr.String(name))
	if name == "$collStats" {
		c := expr.NewDocBuilder()
		c.Append("count", expr.Int64(int64(len(h.colls[ns]))))
		b.Append("count", expr.Int64(int64(len(h.colls[ns]))))
	}
	return NewSliceSource([]bson.Raw{b.Doc()}), nil
}
