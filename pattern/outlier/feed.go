package outlier

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Feed is a Store kept from a source collection: every source document
// (a purchase) is one element of the parent its ParentField names (the
// book), embedded up to Threshold and in overflow beyond. It implements
// pattern.Dependent, so a pattern.Source over the source collection
// maintains it with every write:
//
//	buyers, _ := books.Feed(purchases, "bookId", func(p bson.Raw) (Buyer, error) { … })
//	src := pattern.NewSource[Purchase](purchases, buyers)
//	src.Insert(ctx, Purchase{BookID: 7, User: "ann"}) // appends ann to book 7
//
// Apply appends on an insert, removes on a delete, and on an update
// removes from the old parent and appends to the new one when the parent
// (or the element's id) changed, and replaces the element in place when
// only its content did. Appends are not idempotent: each Change must be
// applied once (Check with repair resolves doubles and gaps).
type Feed[P, E any] struct {
	store   *Store[P, E]
	source  *mongo.Collection
	field   string
	element func(src bson.Raw) (E, error)
}

// Feed declares s a Dependent of source: element builds the element of
// one source document (it must carry Config.ElementID, unique per source
// document, usually the source _id), and parentField names the source
// field holding the parent's _id. It needs Config.ElementID.
func (s *Store[P, E]) Feed(source *mongo.Collection, parentField string, element func(src bson.Raw) (E, error)) (*Feed[P, E], error) {
	switch {
	case s.cfg.ElementID == "":
		return nil, fmt.Errorf("outlier: feed: %w", errNoElementID)
	case source == nil || element == nil:
		return nil, fmt.Errorf("outlier: feed: %w: nil source or element func", ErrInvalidConfig)
	case parentField == "":
		return nil, fmt.Errorf("outlier: feed: %w: empty parent field", ErrInvalidConfig)
	}
	return &Feed[P, E]{store: s, source: source, field: parentField, element: element}, nil
}

// Store returns the Store the Feed maintains.
func (f *Feed[P, E]) Store() *Store[P, E] { return f.store }

// Name says what the copy is: "outlier books.buyers from purchases".
func (f *Feed[P, E]) Name() string {
	return fmt.Sprintf("outlier %s.%s from %s", f.store.parents.Name(), f.store.cfg.List, f.source.Name())
}

// EnsureIndexes creates the Store's indexes and {parentField: 1} on the
// source, which Check reads each parent's source documents with.
func (f *Feed[P, E]) EnsureIndexes(ctx context.Context) error {
	if err := f.store.EnsureIndexes(ctx); err != nil {
		return err
	}
	if _, err := f.source.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: f.field, Value: 1}}}); err != nil {
		return fmt.Errorf("outlier: ensure indexes: %w", err)
	}
	return nil
}

// item is one source document as the Feed sees it.
type item[E any] struct {
	parent bson.RawValue // zero when the document names no parent
	id     bson.RawValue // the element's ElementID
	elem   E
	raw    bson.Raw // the element marshalled
}

// itemOf builds the item of source document doc (nil gives none).
func (f *Feed[P, E]) itemOf(doc bson.Raw) (*item[E], error) {
	if doc == nil {
		return nil, nil
	}
	it := &item[E]{}
	if v, err := doc.LookupErr(f.field); err == nil && v.Type != bson.TypeNull && v.Type != bson.TypeUndefined {
		it.parent = v
	}
	e, err := f.element(doc)
	if err != nil {
		return nil, fmt.Errorf("element of %v: %w", doc.Lookup("_id"), err)
	}
	raw, err := bson.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("element of %v is not a document: %w", doc.Lookup("_id"), err)
	}
	id, err := bson.Raw(raw).LookupErr(f.store.cfg.ElementID)
	if err != nil {
		return nil, fmt.Errorf("element of %v has no %q", doc.Lookup("_id"), f.store.cfg.ElementID)
	}
	it.id, it.elem, it.raw = id, e, raw
	return it, nil
}

// Apply brings the Store up to date with one change on the source.
func (f *Feed[P, E]) Apply(ctx context.Context, c pattern.Change) error {
	before, err := f.itemOf(c.Before)
	if err != nil {
		return fmt.Errorf("outlier: apply: %w", err)
	}
	after, err := f.itemOf(c.After)
	if err != nil {
		return fmt.Errorf("outlier: apply: %w", err)
	}
	if before != nil && before.parent.IsZero() {
		before = nil
	}
	if after != nil && after.parent.IsZero() {
		after = nil
	}
	switch {
	case before == nil && after == nil:
		return nil
	case before != nil && after != nil && before.parent.Equal(after.parent) && before.id.Equal(after.id):
		if bytesEqual(before.raw, after.raw) {
			return nil
		}
		_, err := f.store.Replace(ctx, after.parent, after.id, after.elem)
		if errors.Is(err, ErrNotFound) {
			// Missing from the copy: put it there.
			_, err = f.store.Append(ctx, after.parent, after.elem)
		}
		return err
	}
	if before != nil {
		// Removing what is already gone (its parent deleted, a change
		// applied twice) is not an error.
		if _, err := f.store.Remove(ctx, before.parent, before.id); err != nil &&
			!errors.Is(err, ErrNotFound) && !errors.Is(err, ErrParentNotFound) {
			return err
		}
	}
	if after != nil {
		if _, err := f.store.Append(ctx, after.parent, after.elem); err != nil {
			return err
		}
	}
	return nil
}

// bytesEqual compares two marshalled documents.
func bytesEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// maxDetails bounds the Details lines of a Check result.
const maxDetails = 200

// Check compares the Store with the source and, with repair, fixes it:
// first the Store's own consistency (Verify, or Repair, whose problems it
// counts too), then, parent by parent, the elements against the parent's
// source documents: an element missing from the copy is appended, one
// without a source document (or there twice) removed, one whose content
// differs replaced. Source documents naming a parent that does not exist
// are reported, not repaired. It reads every parent, its overflow when
// flagged, and its source documents through {parentField: 1}.
func (f *Feed[P, E]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	res := pattern.Result{Name: f.Name()}
	detail := func(format string, args ...any) {
		if len(res.Details) < maxDetails {
			res.Details = append(res.Details, fmt.Sprintf(format, args...))
		}
	}
	rep, err := f.store.verify(ctx, repair)
	if err != nil {
		return res, fmt.Errorf("outlier: check: %w", err)
	}
	for _, p := range rep.Problems {
		res.Problems++
		if p.Repaired {
			res.Repaired++
		}
		detail("parent %v: %v: %s", p.Parent, p.Kind, p.Detail)
	}
	for _, p := range rep.Overflow.Problems {
		res.Problems++
		if p.Repaired {
			res.Repaired++
		}
		detail("overflow bucket %v: %v: %s", p.ID, p.Kind, p.Detail)
	}
	c, err := f.store.parents.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return res, fmt.Errorf("outlier: check: %w", err)
	}
	defer c.Close(ctx)
	for c.Next(ctx) {
		res.Checked++
		pid := append(bson.Raw(nil), c.Current...).Lookup("_id")
		if err := f.checkParent(ctx, pid, repair, &res, detail); err != nil {
			return res, fmt.Errorf("outlier: check: %w", err)
		}
	}
	if err := c.Err(); err != nil {
		return res, fmt.Errorf("outlier: check: %w", err)
	}
	if err := f.checkOrphans(ctx, &res, detail); err != nil {
		return res, fmt.Errorf("outlier: check: %w", err)
	}
	return res, nil
}

// key is a map key for a BSON value: its type and bytes.
func key(v bson.RawValue) string { return string(rune(v.Type)) + string(v.Value) }

// checkParent compares one parent's elements with its source documents.
func (f *Feed[P, E]) checkParent(ctx context.Context, pid bson.RawValue, repair bool, res *pattern.Result, detail func(string, ...any)) error {
	p, err := f.store.GetAll(ctx, pid)
	if errors.Is(err, ErrParentNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	have := map[string][]bson.Raw{}
	for _, e := range p.Elements {
		raw, err := bson.Marshal(e)
		if err != nil {
			return err
		}
		have[key(bson.Raw(raw).Lookup(f.store.cfg.ElementID))] = append(have[key(bson.Raw(raw).Lookup(f.store.cfg.ElementID))], raw)
	}
	sc, err := f.source.Find(ctx, bson.D{{Key: f.field, Value: pid}})
	if err != nil {
		return err
	}
	defer sc.Close(ctx)
	want := map[string]*item[E]{}
	var order []string
	for sc.Next(ctx) {
		it, err := f.itemOf(append(bson.Raw(nil), sc.Current...))
		if err != nil {
			return err
		}
		k := key(it.id)
		if _, dup := want[k]; !dup {
			order = append(order, k)
		}
		want[k] = it
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fix := func(what string, do func() error) error {
		res.Problems++
		detail("parent %v: %s", pid, what)
		if !repair {
			return nil
		}
		if err := do(); err != nil {
			return err
		}
		res.Repaired++
		return nil
	}
	for _, k := range order {
		it, got := want[k], have[k]
		switch {
		case len(got) == 0:
			if err := fix(fmt.Sprintf("element %v missing", it.id), func() error {
				_, err := f.store.Append(ctx, pid, it.elem)
				return err
			}); err != nil {
				return err
			}
		case !bytesEqual(got[0], it.raw):
			if err := fix(fmt.Sprintf("element %v differs from its source", it.id), func() error {
				_, err := f.store.Replace(ctx, pid, it.id, it.elem)
				return err
			}); err != nil {
				return err
			}
		}
		for range max(len(got)-1, 0) {
			if err := fix(fmt.Sprintf("element %v stored more than once", it.id), func() error {
				_, err := f.store.Remove(ctx, pid, it.id)
				return err
			}); err != nil {
				return err
			}
		}
	}
	extra := make([]string, 0)
	for k := range have {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		id := bson.Raw(have[k][0]).Lookup(f.store.cfg.ElementID)
		for range have[k] {
			if err := fix(fmt.Sprintf("element %v has no source document", id), func() error {
				_, err := f.store.Remove(ctx, pid, id)
				return err
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOrphans reports source documents whose parent does not exist.
func (f *Feed[P, E]) checkOrphans(ctx context.Context, res *pattern.Result, detail func(string, ...any)) error {
	dr := f.source.Distinct(ctx, f.field, bson.D{})
	if err := dr.Err(); err != nil {
		return err
	}
	raw, err := dr.Raw()
	if err != nil {
		return err
	}
	vals, err := raw.Values()
	if err != nil {
		return err
	}
	for _, pid := range vals {
		if pid.Type == bson.TypeNull {
			continue
		}
		if err := f.store.exists(ctx, pid); errors.Is(err, ErrParentNotFound) {
			res.Problems++
			detail("source documents name parent %v, which does not exist", pid)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Compile-time check that a Feed is a pattern.Dependent.
var _ pattern.Dependent = (*Feed[bson.D, bson.D])(nil)
