package extref

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxRounds bounds the re-reads with which a fan-out or an insert waits
// for its source to stop changing, and the compare-and-set retries of one
// Update under contention.
const maxRounds = 1000

// FanOut counts what a fan-out did: referencing documents matched (the
// live ones of the source, once per round) and modified (those whose copy
// differed).
type FanOut struct {
	Matched  int64
	Modified int64
}

// add accumulates another round's counts.
func (f *FanOut) add(o FanOut) { f.Matched += o.Matched; f.Modified += o.Modified }

// Copy reads the source document sourceID and returns the extended
// reference to embed: its _id and copied fields. It wraps ErrNotFound
// when there is no such document.
func (r *Reference[S, R, C]) Copy(ctx context.Context, sourceID any) (C, error) {
	var out C
	src, err := r.readSource(ctx, sourceID)
	if err != nil {
		return out, fmt.Errorf("extref: copy: %w", err)
	}
	if err := decode(r.reference(src), &out); err != nil {
		return out, fmt.Errorf("extref: copy: %w", err)
	}
	return out, nil
}

// readSource reads the copied fields of one source document; it wraps
// ErrNotFound.
func (r *Reference[S, R, C]) readSource(ctx context.Context, id any) (bson.Raw, error) {
	src, err := r.sources.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(r.projection())).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("source %v: %w", id, ErrNotFound)
	}
	return src, err
}

// Insert embeds the extended reference to sourceID in doc under
// Config.Field, replacing whatever doc holds there (the zero value of a
// struct's field), inserts it into the referencing collection, and
// returns it as stored, with the _id the insert gave it.
//
// It reads the source, inserts, and reads the source again: if the
// source changed in between (its own fan-out may have missed the new
// document) it rewrites the copy, and if the source was deleted it
// removes the document again and wraps ErrParentNotFound, so that no
// insert outlives a concurrent delete of its source. It wraps
// ErrParentNotFound when the source does not exist.
func (r *Reference[S, R, C]) Insert(ctx context.Context, sourceID any, doc R) (R, error) {
	var out R
	src, err := r.readSource(ctx, sourceID)
	if errors.Is(err, ErrNotFound) {
		return out, fmt.Errorf("extref: insert: source %v: %w", sourceID, ErrParentNotFound)
	}
	if err != nil {
		return out, fmt.Errorf("extref: insert: %w", err)
	}
	raw, err := r.embed(doc, src)
	if err != nil {
		return out, fmt.Errorf("extref: insert: %w", err)
	}
	if _, err := r.refs.InsertOne(ctx, raw); err != nil {
		return out, fmt.Errorf("extref: insert: %w", err)
	}
	id := raw.Lookup("_id")
	if err := r.settleDocs(ctx, src, bson.D{{Key: "_id", Value: id}}); err != nil {
		return out, fmt.Errorf("extref: insert: %w", err)
	}
	if err := bson.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("extref: insert: %w", err)
	}
	return out, nil
}

// settleDocs re-reads the source src a write just copied into the
// referencing documents matched by which, until the copy written is the
// source's current one: it rewrites the copy when the source changed
// and deletes the documents, wrapping ErrParentNotFound, when the source
// is gone.
func (r *Reference[S, R, C]) settleDocs(ctx context.Context, src bson.Raw, which bson.D) error {
	id := src.Lookup("_id")
	for range maxRounds {
		now, err := r.readSource(ctx, id)
		if errors.Is(err, ErrNotFound) {
			if _, err := r.refs.DeleteMany(ctx, which); err != nil {
				return fmt.Errorf("source %v deleted meanwhile, and removing the new documents failed (run Check with repair): %w", id, err)
			}
			return fmt.Errorf("source %v deleted meanwhile: %w", id, ErrParentNotFound)
		}
		if err != nil {
			return err
		}
		if r.sameCopy(src, now) {
			return nil
		}
		if _, err := r.refs.UpdateMany(ctx, r.live(which), r.copyUpdate(now)); err != nil {
			return err
		}
		src = now
	}
	return fmt.Errorf("source %v kept changing for %d rounds (run Sync)", id, maxRounds)
}

// embed marshals doc with the reference built from src under
// Config.Field, in the field's place (or last), and an ObjectID _id in
// front when doc has none.
func (r *Reference[S, R, C]) embed(doc R, src bson.Raw) (bson.Raw, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, err
	}
	elems, err := bson.Raw(raw).Elements()
	if err != nil {
		return nil, err
	}
	out := make(bson.D, 0, len(elems)+2)
	placed, hasID := false, false
	for _, e := range elems {
		switch e.Key() {
		case r.cfg.Field:
			out = append(out, bson.E{Key: r.cfg.Field, Value: r.reference(src)})
			placed = true
			continue
		case "_id":
			hasID = true
		}
		out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
	}
	if !placed {
		out = append(out, bson.E{Key: r.cfg.Field, Value: r.reference(src)})
	}
	if !hasID {
		out = append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, out...)
	}
	b, err := bson.Marshal(out)
	return bson.Raw(b), err
}

// Update applies update (update operators, or a pipeline) to the source
// document sourceID and returns the document as it now is, with what the
// fan-out did. When the update may change a copied field (an operator
// naming it, any pipeline) it runs as a compare-and-set whose before and
// after images say whether a copied field really changed, and if one did
// it fans the copy out to every live referencing document (see Apply).
// An update of uncopied fields only is one findAndModify and no fan-out.
//
// With transactions (see pattern.Atomic) the source update and its
// fan-out commit together; without, the source is written first and the
// fan-out converges: a failed fan-out leaves copies stale until Sync or
// Check with repair, and re-running Update is safe. It wraps ErrNotFound.
func (r *Reference[S, R, C]) Update(ctx context.Context, sourceID any, update any) (S, FanOut, error) {
	var out S
	var fo FanOut
	touches, err := r.touchesCopy(update)
	if err != nil {
		return out, fo, fmt.Errorf("extref: update: %w", err)
	}
	if !touches {
		after, err := r.sources.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: sourceID}}, update,
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return out, fo, fmt.Errorf("extref: update: source %v: %w", sourceID, ErrNotFound)
		}
		if err == nil {
			err = bson.Unmarshal(after, &out)
		}
		if err != nil {
			return out, fo, fmt.Errorf("extref: update: %w", err)
		}
		return out, fo, nil
	}
	_, err = pattern.Atomic(ctx, r.client(), func(ctx context.Context) error {
		fo = FanOut{}
		before, after, err := r.swap(ctx, sourceID, update)
		if err != nil {
			return err
		}
		if err := bson.Unmarshal(after, &out); err != nil {
			return err
		}
		fo, err = r.applyUpdate(ctx, before, after)
		if err != nil {
			return fmt.Errorf("source updated, fan-out failed (run Sync): %w", err)
		}
		return nil
	})
	if err != nil {
		return out, fo, fmt.Errorf("extref: update: %w", err)
	}
	return out, fo, nil
}

// touchesCopy reports whether update may change a copied field: a
// pipeline or a replacement may change anything, an operator update
// only the fields it names (and, for $rename, the names it renames to).
func (r *Reference[S, R, C]) touchesCopy(update any) (bool, error) {
	t, data, err := bson.MarshalValue(update)
	if err != nil {
		return false, err
	}
	if t != bson.TypeEmbeddedDocument {
		return true, nil // a pipeline
	}
	ops, err := bson.Raw(data).Elements()
	if err != nil {
		return false, err
	}
	if len(ops) == 0 {
		return false, errors.New("empty update")
	}
	for _, op := range ops {
		fields, ok := op.Value().DocumentOK()
		if len(op.Key()) == 0 || op.Key()[0] != '$' || !ok {
			return true, nil // a replacement, or a malformed update the server will refuse
		}
		elems, err := fields.Elements()
		if err != nil {
			return false, err
		}
		for _, e := range elems {
			if r.copied[top(e.Key())] {
				return true, nil
			}
			if s, ok := e.Value().StringValueOK(); ok && op.Key() == "$rename" && r.copied[top(s)] {
				return true, nil
			}
		}
	}
	return false, nil
}

// top is the first segment of a dotted path.
func top(path string) string {
	for i := range len(path) {
		if path[i] == '.' {
			return path[:i]
		}
	}
	return path
}

// swap reads the source document id, applies update with a filter that
// matches it only while unchanged, and retries when another writer got
// there first. It returns the whole document before and after.
func (r *Reference[S, R, C]) swap(ctx context.Context, id, update any) (before, after bson.Raw, err error) {
	for range maxRounds {
		before, err = r.sources.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil, fmt.Errorf("source %v: %w", id, ErrNotFound)
		}
		if err != nil {
			return nil, nil, err
		}
		same := bson.D{{Key: "_id", Value: id}, {Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{
			"$$ROOT", bson.D{{Key: "$literal", Value: before}}}}}}}
		after, err = r.sources.FindOneAndUpdate(ctx, same, update,
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return before, after, nil
	}
	return nil, nil, fmt.Errorf("source %v: gave up after %d concurrent changes", id, maxRounds)
}

// applyUpdate fans the copy out when a copied field differs between the
// before and after images of a source document.
func (r *Reference[S, R, C]) applyUpdate(ctx context.Context, before, after bson.Raw) (FanOut, error) {
	if r.sameCopy(before, after) {
		return FanOut{}, nil
	}
	return r.settle(ctx, after)
}

// Sync reads the source document sourceID and sets every copied field in
// its live referencing documents to the source's current value. It is
// the idempotent repair of one source after a failed fan-out. It wraps
// ErrNotFound when the source is gone.
func (r *Reference[S, R, C]) Sync(ctx context.Context, sourceID any) (FanOut, error) {
	src, err := r.readSource(ctx, sourceID)
	if err != nil {
		return FanOut{}, fmt.Errorf("extref: sync: %w", err)
	}
	fo, err := r.settle(ctx, src)
	if err != nil {
		return fo, fmt.Errorf("extref: sync: %w", err)
	}
	return fo, nil
}

// settle fans the copy of src out to its live referencing documents,
// then re-reads the source and fans out again until the copy fanned out
// is the source's current one. So the last fan-out to reach a document
// carries the source's last value, whatever order concurrent fan-outs of
// one source land in: each is followed by a re-read, and a change after
// that re-read is followed by a fan-out of its own. A source deleted
// meanwhile ends the loop; its delete's policy takes over.
func (r *Reference[S, R, C]) settle(ctx context.Context, src bson.Raw) (FanOut, error) {
	var total FanOut
	id := src.Lookup("_id")
	for range maxRounds {
		fo, err := r.fanOut(ctx, src)
		total.add(fo)
		if err != nil {
			return total, err
		}
		now, err := r.readSource(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if r.sameCopy(src, now) {
			return total, nil
		}
		src = now
	}
	return total, fmt.Errorf("source %v kept changing for %d rounds (run Sync)", id, maxRounds)
}

// copyUpdate sets every copied field of the reference to its value in
// src, and unsets those src lacks.
func (r *Reference[S, R, C]) copyUpdate(src bson.Raw) bson.D {
	var set, unset bson.D
	for _, f := range r.cfg.Fields {
		path := r.cfg.Field + "." + f
		if v, err := src.LookupErr(f); err == nil {
			set = append(set, bson.E{Key: path, Value: v})
		} else {
			unset = append(unset, bson.E{Key: path, Value: ""})
		}
	}
	upd := bson.D{}
	if len(set) > 0 {
		upd = append(upd, bson.E{Key: "$set", Value: set})
	}
	if len(unset) > 0 {
		upd = append(upd, bson.E{Key: "$unset", Value: unset})
	}
	return upd
}

// fanOut writes the copy of src into every tracked referencing document
// of src, in one updateMany.
func (r *Reference[S, R, C]) fanOut(ctx context.Context, src bson.Raw) (FanOut, error) {
	res, err := r.refs.UpdateMany(ctx, r.tracked(src.Lookup("_id")), r.copyUpdate(src))
	if err != nil {
		return FanOut{}, err
	}
	return FanOut{Matched: res.MatchedCount, Modified: res.ModifiedCount}, nil
}

// List returns up to limit referencing documents of sourceID, frozen or
// not, in Config.OrderBy order (limit <= 0: all). It is the read path the
// index serves: an equality on <Field>._id and the index order.
func (r *Reference[S, R, C]) List(ctx context.Context, sourceID any, limit int64) ([]R, error) {
	opts := options.Find()
	if len(r.cfg.OrderBy) > 0 {
		opts.SetSort(r.cfg.OrderBy)
	}
	if limit > 0 {
		opts.SetLimit(limit)
	}
	cur, err := r.refs.Find(ctx, bson.D{{Key: r.idPath(), Value: sourceID}}, opts)
	if err != nil {
		return nil, fmt.Errorf("extref: list: %w", err)
	}
	var out []R
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("extref: list: %w", err)
	}
	return out, nil
}

// decode converts v (a bson.D or raw document) into out through BSON.
func decode(v any, out any) error {
	b, err := bson.Marshal(v)
	if err != nil {
		return err
	}
	return bson.Unmarshal(b, out)
}
