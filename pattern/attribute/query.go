package attribute

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Cond is a condition on one attribute: the document has the attribute
// and its value satisfies every operator added. Build it with Where; a
// Cond is an immutable value, each method returns a new one.
type Cond struct {
	name string
	ops  []op
}

// op is one comparison; values hold one value, or several for $in.
type op struct {
	name   string
	values []any
}

// Where starts a condition on the attribute name. Alone, it means "the
// document has the attribute".
func Where(name string) Cond { return Cond{name: name} }

// with returns c with one more operator.
func (c Cond) with(name string, values ...any) Cond {
	ops := make([]op, len(c.ops), len(c.ops)+1)
	copy(ops, c.ops)
	return Cond{name: c.name, ops: append(ops, op{name: name, values: values})}
}

// Eq requires the value to equal v.
func (c Cond) Eq(v any) Cond { return c.with("$eq", v) }

// Ne requires the attribute to be present with a value other than v.
func (c Cond) Ne(v any) Cond { return c.with("$ne", v) }

// Gt requires the value to be greater than v (same type bracket).
func (c Cond) Gt(v any) Cond { return c.with("$gt", v) }

// Gte requires the value to be at least v (same type bracket).
func (c Cond) Gte(v any) Cond { return c.with("$gte", v) }

// Lt requires the value to be less than v (same type bracket).
func (c Cond) Lt(v any) Cond { return c.with("$lt", v) }

// Lte requires the value to be at most v (same type bracket).
func (c Cond) Lte(v any) Cond { return c.with("$lte", v) }

// In requires the value to equal one of vs.
func (c Cond) In(vs ...any) Cond { return c.with("$in", vs...) }

// Filter is a set of conditions combined with AND (All) or OR (Any).
// Stores compile it; there is no other way to make one.
type Filter struct {
	or    bool
	conds []Cond
}

// All matches documents that satisfy every condition, each on its own
// attribute element.
func All(cs ...Cond) Filter { return Filter{conds: cs} }

// Any matches documents that satisfy at least one condition.
func Any(cs ...Cond) Filter { return Filter{or: true, conds: cs} }

// Filter compiles f into a query filter for this Store's form, checking
// every value as a write would (Config.Kinds, NumericStrings, Strict). In
// the array form every condition is an $elemMatch on one element. The
// result can be combined with filters on other fields under $and.
func (s *Store[D]) Filter(f Filter) (bson.D, error) {
	if len(f.conds) == 0 {
		return nil, errors.New("attribute: filter: no conditions")
	}
	parts := make(bson.A, 0, len(f.conds))
	for _, c := range f.conds {
		d, err := s.compile(c)
		if err != nil {
			return nil, fmt.Errorf("attribute: filter: %w", err)
		}
		parts = append(parts, d)
	}
	if len(parts) == 1 {
		return parts[0].(bson.D), nil
	}
	if f.or {
		return bson.D{{Key: "$or", Value: parts}}, nil
	}
	return bson.D{{Key: "$and", Value: parts}}, nil
}

// compile turns one condition into a filter document.
func (s *Store[D]) compile(c Cond) (bson.D, error) {
	if err := checkName(c.name, s.wildcard); err != nil {
		return nil, err
	}
	if _, declared := s.cfg.Kinds[c.name]; !declared && s.cfg.Strict {
		return nil, fmt.Errorf("%w: %q", ErrUndeclared, c.name)
	}
	ops := bson.D{}
	for _, o := range c.ops {
		if len(o.values) == 0 {
			return nil, fmt.Errorf("attribute %q: %s needs a value", c.name, o.name)
		}
		vals := make(bson.A, len(o.values))
		for i, v := range o.values {
			nv, err := s.value(c.name, v)
			if err != nil {
				return nil, err
			}
			vals[i] = nv
		}
		if o.name == "$in" {
			ops = append(ops, bson.E{Key: o.name, Value: vals})
		} else {
			ops = append(ops, bson.E{Key: o.name, Value: vals[0]})
		}
	}
	if s.wildcard {
		// "Has the attribute" also under $ne, which alone would match
		// documents without it.
		if len(ops) == 0 || hasOp(ops, "$ne") {
			ops = append(bson.D{{Key: "$exists", Value: true}}, ops...)
		}
		return bson.D{{Key: s.fieldPath(c.name), Value: ops}}, nil
	}
	elem := bson.D{{Key: s.cfg.Key, Value: c.name}}
	if len(ops) > 0 {
		elem = append(elem, bson.E{Key: s.cfg.Value, Value: ops})
	}
	return bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: "$elemMatch", Value: elem}}}}, nil
}

// hasOp reports whether ops holds the operator name.
func hasOp(ops bson.D, name string) bool {
	for _, e := range ops {
		if e.Key == name {
			return true
		}
	}
	return false
}

// Find runs find with the compiled filter and opts (sort, limit, skip…)
// and returns the documents it matches. For results too large to hold,
// use Cursor.
func (s *Store[D]) Find(ctx context.Context, f Filter, opts ...options.Lister[options.FindOptions]) ([]D, error) {
	c, err := s.Cursor(ctx, f, opts...)
	if err != nil {
		return nil, fmt.Errorf("attribute: find: %w", err)
	}
	var out []D
	if err := c.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("attribute: find: %w", err)
	}
	return out, nil
}

// Cursor runs find with the compiled filter and opts (sort, projection,
// limit…), and returns the driver's cursor, whose documents decode into
// D; the caller closes it.
func (s *Store[D]) Cursor(ctx context.Context, f Filter, opts ...options.Lister[options.FindOptions]) (*mongo.Cursor, error) {
	q, err := s.Filter(f)
	if err != nil {
		return nil, fmt.Errorf("attribute: cursor: %w", err)
	}
	c, err := s.coll.Find(ctx, q, opts...)
	if err != nil {
		return nil, fmt.Errorf("attribute: cursor: %w", err)
	}
	return c, nil
}

// Count returns the number of documents f matches.
func (s *Store[D]) Count(ctx context.Context, f Filter) (int64, error) {
	q, err := s.Filter(f)
	if err != nil {
		return 0, fmt.Errorf("attribute: count: %w", err)
	}
	n, err := s.coll.CountDocuments(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("attribute: count: %w", err)
	}
	return n, nil
}
