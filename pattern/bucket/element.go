package bucket

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// errNoElementID is returned by the element verbs without Config.ElementID.
var errNoElementID = fmt.Errorf("%w: Config.ElementID is not set", ErrInvalidConfig)

// elementFilter selects the owner's bucket holding element id.
func (s *Store[E]) elementFilter(owner, id any) bson.D {
	return bson.D{{Key: s.cfg.Owner, Value: owner}, {Key: s.elementPath(), Value: id}}
}

// Find returns the owner's element whose ElementID field equals id and the
// bucket holding it. Only that element travels back: the read projects
// {"elements.$": 1}. With several matches (ids are not unique by
// construction) it returns one of them. It returns ErrNotFound, wrapped,
// when there is none.
func (s *Store[E]) Find(ctx context.Context, owner, id any) (E, Info, error) {
	var zero E
	if s.cfg.ElementID == "" {
		return zero, Info{}, fmt.Errorf("bucket: find: %w", errNoElementID)
	}
	proj := bson.D{
		{Key: s.cfg.Elements + ".$", Value: 1},
		{Key: s.cfg.OpenedAt, Value: 1},
		{Key: s.cfg.Count, Value: 1},
		{Key: s.cfg.MinTime, Value: 1},
		{Key: s.cfg.MaxTime, Value: 1},
	}
	var doc bson.Raw
	err := s.coll.FindOne(ctx, s.elementFilter(owner, id), options.FindOne().SetProjection(proj)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return zero, Info{}, fmt.Errorf("bucket: find: %v: %w", id, ErrNotFound)
	}
	if err != nil {
		return zero, Info{}, fmt.Errorf("bucket: find: %w", err)
	}
	in, err := s.decodeInfo(doc)
	if err != nil {
		return zero, Info{}, fmt.Errorf("bucket: find: %w", err)
	}
	es, err := s.decodeElements(doc)
	if err != nil {
		return zero, Info{}, fmt.Errorf("bucket: find: %w", err)
	}
	if len(es) != 1 {
		return zero, Info{}, fmt.Errorf("bucket: find: positional projection returned %d elements", len(es))
	}
	return es[0], in, nil
}

// Replace overwrites the owner's element whose id is id with e, using the
// positional operator: updateOne({owner, "elements.id": id},
// {$set: {"elements.$": e}}). e must carry the same id, with the same BSON
// type, so the element stays findable. It returns ErrNotFound, wrapped,
// when no element has the id.
func (s *Store[E]) Replace(ctx context.Context, owner, id any, e E) error {
	if s.cfg.ElementID == "" {
		return fmt.Errorf("bucket: replace: %w", errNoElementID)
	}
	doc, err := bson.Marshal(e)
	if err != nil {
		return fmt.Errorf("bucket: replace: element is not a document: %w", err)
	}
	got, err := bson.Raw(doc).LookupErr(s.cfg.ElementID)
	if err != nil {
		return fmt.Errorf("bucket: replace: element has no %q field", s.cfg.ElementID)
	}
	t, data, err := bson.MarshalValue(id)
	if err != nil {
		return fmt.Errorf("bucket: replace: id: %w", err)
	}
	if !got.Equal(bson.RawValue{Type: t, Value: data}) {
		return fmt.Errorf("bucket: replace: element's %s is %v, want %v", s.cfg.ElementID, got, id)
	}
	if s.cfg.Time != "" {
		// The replacement's time may lie outside the bounds, and the old
		// one may have been a bound: recompute both in the same update.
		if _, err := s.inspect(e, timeSpan{}); err != nil {
			return fmt.Errorf("bucket: replace: %w", err)
		}
		r, err := s.coll.UpdateOne(ctx, s.elementFilter(owner, id), s.replacePipeline(id, bson.Raw(doc)))
		if err != nil {
			return fmt.Errorf("bucket: replace: %w", err)
		}
		if r.MatchedCount == 0 {
			return fmt.Errorf("bucket: replace: %v: %w", id, ErrNotFound)
		}
		return nil
	}
	upd := bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Elements + ".$", Value: bson.Raw(doc)}}}}
	r, err := s.coll.UpdateOne(ctx, s.elementFilter(owner, id), upd)
	if err != nil {
		return fmt.Errorf("bucket: replace: %w", err)
	}
	if r.MatchedCount == 0 {
		return fmt.Errorf("bucket: replace: %v: %w", id, ErrNotFound)
	}
	return nil
}

// Update sets fields of the owner's element whose id is id. Keys of set
// are paths inside the element ("qty", "fees.total"); they may not touch
// the id field. It runs one update with a filtered positional operator:
// {$set: {"elements.$[e].qty": 400}} with arrayFilters [{"e.id": id}], so
// every element of the matched bucket with that id changes. It returns
// ErrNotFound, wrapped, when no element has the id.
func (s *Store[E]) Update(ctx context.Context, owner, id any, set bson.D) error {
	if s.cfg.ElementID == "" {
		return fmt.Errorf("bucket: update: %w", errNoElementID)
	}
	if len(set) == 0 {
		return errors.New("bucket: update: nothing to set")
	}
	fields := make(bson.D, 0, len(set))
	for _, f := range set {
		switch {
		case f.Key == "" || strings.HasPrefix(f.Key, "$") || strings.Contains(f.Key, ".$"):
			return fmt.Errorf("bucket: update: %q is not a field path", f.Key)
		case f.Key == s.cfg.ElementID || strings.HasPrefix(f.Key, s.cfg.ElementID+"."):
			return fmt.Errorf("bucket: update: %q would change the element id", f.Key)
		case s.cfg.Time != "" && (f.Key == s.cfg.Time || strings.HasPrefix(f.Key, s.cfg.Time+".")):
			return fmt.Errorf("bucket: update: %q would change the element time (use Replace, which keeps the bounds)", f.Key)
		}
		fields = append(fields, bson.E{Key: s.cfg.Elements + ".$[e]." + f.Key, Value: f.Value})
	}
	opts := options.UpdateOne().SetArrayFilters([]any{bson.D{{Key: "e." + s.cfg.ElementID, Value: id}}})
	r, err := s.coll.UpdateOne(ctx, s.elementFilter(owner, id), bson.D{{Key: "$set", Value: fields}}, opts)
	if err != nil {
		return fmt.Errorf("bucket: update: %w", err)
	}
	if r.MatchedCount == 0 {
		return fmt.Errorf("bucket: update: %v: %w", id, ErrNotFound)
	}
	return nil
}
