package versioning

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// upgrade runs the Up functions from version from to the newest on doc,
// setting the version field after each step.
func (s *Store[T]) upgrade(doc bson.D, from int) (bson.D, error) {
	for n := from + 1; n <= s.Latest(); n++ {
		var err error
		id := get(doc, "_id")
		doc, err = s.version(n).Up(doc)
		if err != nil {
			return nil, fmt.Errorf("versioning: %v from version %d to %d: %w: %w", id, n-1, n, err, ErrUpgrade)
		}
		doc = set(doc, s.cfg.Field, n)
	}
	return doc, nil
}

// Upgraded returns a stored document as the newest version would store
// it, and the version it was stored at.
func (s *Store[T]) Upgraded(doc bson.Raw) (bson.D, int, error) {
	n, err := s.versionOf(doc)
	if err != nil {
		return nil, 0, err
	}
	var d bson.D
	if err := bson.Unmarshal(doc, &d); err != nil {
		return nil, n, err
	}
	if n == s.Latest() {
		return d, n, nil
	}
	d, err = s.upgrade(d, n)
	return d, n, err
}

// Decode reads a stored document of any live version into T, upgrading
// it in memory, and returns the version it was stored at.
func (s *Store[T]) Decode(doc bson.Raw) (T, int, error) {
	var out T
	d, n, err := s.Upgraded(doc)
	if err != nil {
		return out, n, err
	}
	if n == s.Latest() {
		err = bson.Unmarshal(doc, &out)
		return out, n, err
	}
	b, err := bson.Marshal(d)
	if err != nil {
		return out, n, err
	}
	err = bson.Unmarshal(b, &out)
	return out, n, err
}

// Get reads document id into T, whatever its stored version. It wraps
// ErrNotFound.
func (s *Store[T]) Get(ctx context.Context, id any) (T, error) {
	raw, err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		var zero T
		return zero, fmt.Errorf("versioning: get %v: %w", id, ErrNotFound)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	out, _, err := s.Decode(raw)
	return out, err
}

// Find reads the documents filter matches into T, each upgraded in
// memory. A filter on a field that moved between versions must name every
// location the field has in a live version (see AnyOf).
func (s *Store[T]) Find(ctx context.Context, filter bson.D, opts ...options.Lister[options.FindOptions]) ([]T, error) {
	if filter == nil {
		filter = bson.D{}
	}
	cur, err := s.coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	out := []T{}
	for cur.Next(ctx) {
		v, _, err := s.Decode(cur.Current)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, cur.Err()
}

// AnyOf returns {$or: [{path1: cond}, {path2: cond}, …]}: a condition on a
// field that lives at a different path in different live versions
// ("work" in version 1, "contactInfo.work" in version 2). With an index
// on each path the planner answers it with one IXSCAN per branch.
func AnyOf(cond any, paths ...string) bson.D {
	or := make(bson.A, len(paths))
	for i, p := range paths {
		or[i] = bson.D{{Key: p, Value: cond}}
	}
	return bson.D{{Key: "$or", Value: or}}
}
