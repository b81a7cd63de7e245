package versioning

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxRetries bounds Upgrade's and Update's retries when another writer
// changes the document between the read and the guarded write.
const maxRetries = 100

// stamp marshals v (a T or any document) with the version field set to
// the newest version, an ObjectID _id added when it has none.
func (s *Store[T]) stamp(v any) (bson.Raw, error) {
	raw, err := pattern.WithID(v)
	if err != nil {
		return nil, err
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	return bson.Marshal(set(d, s.cfg.Field, s.Latest()))
}

// Insert inserts v at the newest version and returns its _id (an ObjectID
// when v has none). New documents are never written at an old version.
func (s *Store[T]) Insert(ctx context.Context, v T) (any, error) {
	doc, err := s.stamp(v)
	if err != nil {
		return nil, err
	}
	if _, err := s.coll.InsertOne(ctx, doc); err != nil {
		return nil, err
	}
	var id any
	_ = doc.Lookup("_id").Unmarshal(&id)
	return id, nil
}

// Replace replaces document id, whatever its version, with v at the
// newest version. It wraps ErrNotFound.
func (s *Store[T]) Replace(ctx context.Context, id any, v T) error {
	raw, err := bson.Marshal(v)
	if err != nil {
		return err
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return err
	}
	d = set(unset(d, "_id"), s.cfg.Field, s.Latest())
	res, err := s.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, d)
	if err != nil {
		return err
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("versioning: replace %v: %w", id, ErrNotFound)
	}
	return nil
}

// Delete deletes document id. It wraps ErrNotFound.
func (s *Store[T]) Delete(ctx context.Context, id any) error {
	res, err := s.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return err
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("versioning: delete %v: %w", id, ErrNotFound)
	}
	return nil
}

// guard is the filter of a guarded upgrade: the document id, still at
// version from.
func (s *Store[T]) guard(id any, from int) bson.D {
	return append(bson.D{{Key: "_id", Value: id}}, s.AtVersion(from)...)
}

// pipeline returns the update pipeline upgrading from version from to the
// newest, and false when a step has no Pipeline.
func (s *Store[T]) pipeline(from int) ([]bson.D, bool) {
	var out []bson.D
	for n := from + 1; n <= s.Latest(); n++ {
		v := s.version(n)
		if v.Pipeline == nil {
			return nil, false
		}
		out = append(out, v.Pipeline...)
		out = append(out, bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: "$literal", Value: n}}}}}})
	}
	return out, true
}

// upgradeOne upgrades the document doc (read at version from) with one
// guarded write: the steps' pipelines when they all have one, else a
// replace with the Up functions' result. It reports whether this call
// upgraded it (false: another writer got there first, or it is gone).
func (s *Store[T]) upgradeOne(ctx context.Context, id any, from int, doc bson.Raw) (bool, error) {
	if p, ok := s.pipeline(from); ok {
		res, err := s.coll.UpdateOne(ctx, s.guard(id, from), p)
		if err != nil {
			return false, err
		}
		return res.ModifiedCount == 1, nil
	}
	if doc == nil {
		var err error
		doc, err = s.coll.FindOne(ctx, s.guard(id, from)).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	up, _, err := s.Upgraded(doc)
	if err != nil {
		return false, err
	}
	res, err := s.coll.ReplaceOne(ctx, s.guard(id, from), unset(up, "_id"))
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// Upgrade brings document id to the newest version on the server with a
// guarded write (filter {_id, <field>: <its version>}), so of concurrent
// upgraders exactly one writes and none upgrades twice. It reports
// whether this call wrote, and wraps ErrNotFound.
func (s *Store[T]) Upgrade(ctx context.Context, id any) (bool, error) {
	for range maxRetries {
		doc, err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return false, fmt.Errorf("versioning: upgrade %v: %w", id, ErrNotFound)
		}
		if err != nil {
			return false, err
		}
		from, err := s.versionOf(doc)
		if err != nil {
			return false, err
		}
		if from == s.Latest() {
			return false, nil
		}
		ok, err := s.upgradeOne(ctx, id, from, doc)
		if err != nil || ok {
			return ok, err
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("versioning: upgrade %v: still changing after %d tries", id, maxRetries)
}

// Update upgrades document id to the newest version (Upgrade), then
// applies update (operators or a pipeline, written against the newest
// shape) with the filter {_id, <field>: <newest>}, and returns the
// document as it now is: the upgrade-on-write path. It wraps ErrNotFound.
func (s *Store[T]) Update(ctx context.Context, id any, update any) (T, error) {
	var out T
	if _, err := s.Upgrade(ctx, id); err != nil {
		return out, err
	}
	filter := append(bson.D{{Key: "_id", Value: id}}, s.AtVersion(s.Latest())...)
	err := s.coll.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return out, fmt.Errorf("versioning: update %v: %w", id, ErrNotFound)
	}
	return out, err
}
