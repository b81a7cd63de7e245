package outlier

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// ApplyMany brings the Store up to date with several changes on the
// source, in order: each run of consecutive inserts is grouped per parent
// and each group added with one AppendMany (in the inserts' order), so a
// bulk load of one popular parent costs a few round trips instead of
// several per element; every other change goes through Apply, one by one.
// It implements pattern.BatchApplier, which Source.InsertMany and
// AppliedMany use.
func (f *Feed[P, E]) ApplyMany(ctx context.Context, cs []pattern.Change) error {
	var (
		groups = map[string]int{} // parent key -> index in order
		order  []group[E]
	)
	flush := func() error {
		for _, g := range order {
			if _, _, err := f.store.AppendMany(ctx, g.parent, g.elems); err != nil {
				return err
			}
		}
		clear(groups)
		order = order[:0]
		return nil
	}
	for i, c := range cs {
		if c.Op != pattern.Insert || c.Before != nil {
			if err := flush(); err != nil {
				return err
			}
			if err := f.Apply(ctx, c); err != nil {
				return err
			}
			continue
		}
		it, err := f.itemOf(c.After)
		if err != nil {
			return fmt.Errorf("outlier: apply many: change %d: %w", i, err)
		}
		if it == nil || it.parent.IsZero() {
			continue // names no parent: nothing to keep
		}
		k := key(it.parent)
		gi, ok := groups[k]
		if !ok {
			gi = len(order)
			groups[k] = gi
			order = append(order, group[E]{parent: it.parent})
		}
		order[gi].elems = append(order[gi].elems, it.elem)
	}
	return flush()
}

// group is the elements a run of inserts adds to one parent.
type group[E any] struct {
	parent bson.RawValue
	elems  []E
}

// Compile-time check that a Feed applies changes in bulk.
var _ pattern.BatchApplier = (*Feed[bson.D, bson.D])(nil)
