package polymorphic

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Index is a variant's partial index: Keys indexed only in documents of
// that variant (partialFilterExpression {<Field>: <variant>}), so the
// other variants cost it nothing. Name defaults to "<variant>_" followed
// by the server's name for Keys ("card_card.expiresAt_1").
type Index struct {
	Keys   bson.D
	Name   string
	Unique bool // unique among the variant's documents only
}

// Variant is one registered variant whose documents decode into T.
// Every query it builds repeats the discriminator, so a partial index of
// the variant can serve it.
type Variant[T any] struct {
	c    *Collection
	name string
}

// Register adds the variant name, decoded into T (the user's struct;
// bson tags respected), with its partial indexes. A T may declare the
// discriminator field itself (string); Register fails with
// ErrInvalidConfig for an empty or taken name, a type registered twice,
// or an index without keys.
func Register[T any](c *Collection, name string, indexes ...Index) (*Variant[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("polymorphic: register %q: %v is not a struct type: %w", name, t, ErrInvalidConfig)
	}
	if name == "" {
		return nil, fmt.Errorf("polymorphic: register %v: empty variant name: %w", t, ErrInvalidConfig)
	}
	for _, ix := range indexes {
		if len(ix.Keys) == 0 {
			return nil, fmt.Errorf("polymorphic: register %q: an index without keys: %w", name, ErrInvalidConfig)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byName[name]; ok {
		return nil, fmt.Errorf("polymorphic: register %q: name taken: %w", name, ErrInvalidConfig)
	}
	if v, ok := c.byType[t]; ok {
		return nil, fmt.Errorf("polymorphic: register %q: %v already is variant %q: %w", name, t, v.name, ErrInvalidConfig)
	}
	v := &variant{name: name, typ: t, indexes: indexes, decode: func(doc bson.Raw) (any, error) {
		var out T
		if err := bson.Unmarshal(doc, &out); err != nil {
			return nil, fmt.Errorf("polymorphic: decode %v as %s: %w", doc.Lookup("_id"), name, err)
		}
		return out, nil
	}}
	c.variants = append(c.variants, v)
	c.byName[name] = v
	c.byType[t] = v
	return &Variant[T]{c: c, name: name}, nil
}

// model is the index model of a variant's partial index.
func (c *Collection) model(variant string, ix Index) mongo.IndexModel {
	o := options.Index().SetName(indexName(variant, ix)).
		SetPartialFilterExpression(bson.D{{Key: c.cfg.Field, Value: variant}})
	if ix.Unique {
		o.SetUnique(true)
	}
	return mongo.IndexModel{Keys: ix.Keys, Options: o}
}

// indexName is the name of a variant's partial index.
func indexName(variant string, ix Index) string {
	if ix.Name != "" {
		return ix.Name
	}
	return variant + "_" + keysName(ix.Keys)
}

// keysName is the server's default name of an index on keys.
func keysName(keys bson.D) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += "_"
		}
		s += fmt.Sprintf("%s_%v", k.Key, k.Value)
	}
	return s
}

// Name returns the variant's discriminator value.
func (v *Variant[T]) Name() string { return v.name }

// IndexNames returns the names of the variant's partial indexes.
func (v *Variant[T]) IndexNames() []string {
	vi, _ := v.c.lookup(v.name)
	out := make([]string, len(vi.indexes))
	for i, ix := range vi.indexes {
		out[i] = indexName(v.name, ix)
	}
	return out
}

// Filter returns filter with the discriminator first: {<Field>:
// <variant>, …filter}. It is what every read and write of the variant
// sends, and what lets the planner use the variant's partial indexes. A
// filter naming another variant (or the discriminator with an operator)
// fails with ErrWrongVariant.
func (v *Variant[T]) Filter(filter bson.D) (bson.D, error) {
	out := bson.D{{Key: v.c.cfg.Field, Value: v.name}}
	for _, e := range filter {
		if e.Key == v.c.cfg.Field {
			if s, ok := e.Value.(string); !ok || s != v.name {
				return nil, fmt.Errorf("polymorphic: a %s filter on %s %v: %w", v.name, e.Key, e.Value, ErrWrongVariant)
			}
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// Insert inserts value as this variant and returns its _id (an ObjectID
// when value has none).
func (v *Variant[T]) Insert(ctx context.Context, value T) (any, error) {
	doc, err := v.c.stamp(v.name, value)
	if err != nil {
		return nil, err
	}
	if _, err := v.c.coll.InsertOne(ctx, doc); err != nil {
		return nil, err
	}
	return idOf(doc), nil
}

// InsertMany inserts values as this variant in one ordered insertMany
// and returns their _ids.
func (v *Variant[T]) InsertMany(ctx context.Context, values []T) ([]any, error) {
	docs := make([]any, len(values))
	ids := make([]any, len(values))
	for i, x := range values {
		doc, err := v.c.stamp(v.name, x)
		if err != nil {
			return nil, err
		}
		docs[i], ids[i] = doc, idOf(doc)
	}
	if len(docs) == 0 {
		return ids, nil
	}
	_, err := v.c.coll.InsertMany(ctx, docs)
	return ids, err
}

// Get reads document id as this variant; a document of another variant
// is not found. It wraps ErrNotFound.
func (v *Variant[T]) Get(ctx context.Context, id any) (T, error) {
	var out T
	f, _ := v.Filter(bson.D{{Key: "_id", Value: id}})
	err := v.c.coll.FindOne(ctx, f).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return out, fmt.Errorf("polymorphic: get %s %v: %w", v.name, id, ErrNotFound)
	}
	return out, err
}

// Find returns the variant's documents filter matches, decoded into T;
// the discriminator is added to filter (see Filter).
func (v *Variant[T]) Find(ctx context.Context, filter bson.D, opts ...options.Lister[options.FindOptions]) ([]T, error) {
	f, err := v.Filter(filter)
	if err != nil {
		return nil, err
	}
	cur, err := v.c.coll.Find(ctx, f, opts...)
	if err != nil {
		return nil, err
	}
	out := []T{}
	err = cur.All(ctx, &out)
	return out, err
}

// Count counts the variant's documents filter matches.
func (v *Variant[T]) Count(ctx context.Context, filter bson.D) (int64, error) {
	f, err := v.Filter(filter)
	if err != nil {
		return 0, err
	}
	return v.c.coll.CountDocuments(ctx, f)
}

// Update applies update (operators or a pipeline) to document id if it
// is of this variant; it wraps ErrNotFound otherwise. An update that sets
// the discriminator is refused with ErrWrongVariant: a change of variant
// is a Replace through the other variant.
func (v *Variant[T]) Update(ctx context.Context, id any, update any) error {
	if d, ok := update.(bson.D); ok {
		for _, op := range d {
			if fs, ok := op.Value.(bson.D); ok {
				for _, f := range fs {
					if f.Key == v.c.cfg.Field {
						return fmt.Errorf("polymorphic: update %s %v sets %s: %w", v.name, id, f.Key, ErrWrongVariant)
					}
				}
			}
		}
	}
	f, _ := v.Filter(bson.D{{Key: "_id", Value: id}})
	res, err := v.c.coll.UpdateOne(ctx, f, update)
	if err != nil {
		return err
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("polymorphic: update %s %v: %w", v.name, id, ErrNotFound)
	}
	return nil
}

// Replace replaces document id, whatever its variant, with value as this
// variant: the way to change a document's variant. It wraps ErrNotFound.
func (v *Variant[T]) Replace(ctx context.Context, id any, value T) error {
	raw, err := bson.Marshal(value)
	if err != nil {
		return err
	}
	doc, err := v.c.stampRaw(v.name, raw, id)
	if err != nil {
		return err
	}
	res, err := v.c.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, doc)
	if err != nil {
		return err
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("polymorphic: replace %v: %w", id, ErrNotFound)
	}
	return nil
}

// Delete deletes document id if it is of this variant. It wraps
// ErrNotFound.
func (v *Variant[T]) Delete(ctx context.Context, id any) error {
	f, _ := v.Filter(bson.D{{Key: "_id", Value: id}})
	res, err := v.c.coll.DeleteOne(ctx, f)
	if err != nil {
		return err
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("polymorphic: delete %s %v: %w", v.name, id, ErrNotFound)
	}
	return nil
}
