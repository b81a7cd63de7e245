package extref

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// verifyBatch is how many referencing documents Verify compares per
// source lookup ($in of their distinct source ids).
const verifyBatch = 256

// Stale is one referencing document whose copy disagrees with its source.
type Stale struct {
	ID       bson.RawValue // _id of the referencing document
	SourceID bson.RawValue // <Field>._id
	Fields   []string      // copied fields that differ, in Config order
}

// Report is the outcome of Verify or Repair.
type Report struct {
	// Checked counts the live referencing documents compared.
	Checked int64
	// Stale lists the live copies that disagree with their source.
	Stale []Stale
	// Orphans lists the _ids of live referencing documents whose source
	// no longer exists; Repair leaves them alone.
	Orphans []bson.RawValue
	// Repaired counts the referencing documents Repair modified.
	Repaired int64
}

// Verify compares every live (non-frozen) referencing document's copy
// with its source and reports those that disagree. A field present on
// one side only, or with another BSON type or value, disagrees. It reads
// the referencing collection in <Field>._id order through the index and
// the sources with one $in query per batch; it writes nothing. Copies
// being fanned out while Verify runs may be reported.
func (r *Reference) Verify(ctx context.Context) (Report, error) {
	var rep Report
	if err := r.verify(ctx, &rep); err != nil {
		return rep, fmt.Errorf("extref: verify: %w", err)
	}
	return rep, nil
}

// Repair runs Verify and then Sync for every source with a stale copy, so
// that all of that source's live copies are rewritten from its current
// state. The returned Report is Verify's, with Repaired set.
func (r *Reference) Repair(ctx context.Context) (Report, error) {
	var rep Report
	if err := r.verify(ctx, &rep); err != nil {
		return rep, fmt.Errorf("extref: repair: %w", err)
	}
	done := make(map[string]bool)
	for _, s := range rep.Stale {
		key := rawKey(s.SourceID)
		if done[key] {
			continue
		}
		done[key] = true
		src, err := r.readSource(ctx, s.SourceID)
		if errors.Is(err, ErrSourceNotFound) {
			continue // deleted since Verify read it: its copies are orphans now
		}
		if err != nil {
			return rep, fmt.Errorf("extref: repair: %w", err)
		}
		fo, err := r.fanOut(ctx, src, r.cfg.Fields)
		if err != nil {
			return rep, fmt.Errorf("extref: repair: %w", err)
		}
		rep.Repaired += fo.Modified
	}
	return rep, nil
}

// verify streams the live referencing documents and compares them in
// batches; Verify and Repair wrap its errors with their verb.
func (r *Reference) verify(ctx context.Context, rep *Report) error {
	filter := r.live(bson.D{{Key: r.idPath(), Value: bson.D{{Key: "$exists", Value: true}}}})
	opts := options.Find().
		SetProjection(bson.D{{Key: r.cfg.Field, Value: 1}}).
		SetSort(bson.D{{Key: r.idPath(), Value: 1}})
	cur, err := r.refs.Find(ctx, filter, opts)
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	batch := make([]bson.Raw, 0, verifyBatch)
	for cur.Next(ctx) {
		batch = append(batch, append(bson.Raw(nil), cur.Current...))
		if len(batch) == verifyBatch {
			if err := r.compare(ctx, batch, rep); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return r.compare(ctx, batch, rep)
}

// compare checks one batch of projected referencing documents against
// their sources.
func (r *Reference) compare(ctx context.Context, batch []bson.Raw, rep *Report) error {
	if len(batch) == 0 {
		return nil
	}
	ids := bson.A{}
	for i, d := range batch {
		id := d.Lookup(r.cfg.Field, "_id")
		if i == 0 || !id.Equal(batch[i-1].Lookup(r.cfg.Field, "_id")) {
			ids = append(ids, id)
		}
	}
	cur, err := r.sources.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(r.projection()))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	sources := make(map[string]bson.Raw, len(ids))
	for cur.Next(ctx) {
		sources[rawKey(cur.Current.Lookup("_id"))] = append(bson.Raw(nil), cur.Current...)
	}
	if err := cur.Err(); err != nil {
		return err
	}
	for _, d := range batch {
		rep.Checked++
		ref, _ := d.Lookup(r.cfg.Field).DocumentOK()
		srcID := ref.Lookup("_id")
		src, ok := sources[rawKey(srcID)]
		if !ok {
			rep.Orphans = append(rep.Orphans, d.Lookup("_id"))
			continue
		}
		var diff []string
		for _, f := range r.cfg.Fields {
			want, werr := src.LookupErr(f)
			got, gerr := ref.LookupErr(f)
			if (werr == nil) != (gerr == nil) || (werr == nil && !want.Equal(got)) {
				diff = append(diff, f)
			}
		}
		if diff != nil {
			rep.Stale = append(rep.Stale, Stale{ID: d.Lookup("_id"), SourceID: srcID, Fields: diff})
		}
	}
	return nil
}

// rawKey is a map key for a BSON value: its type and bytes. Values that
// compare equal in MongoDB but differ in type (int32 1 and double 1.0)
// get different keys, which is right for _ids copied byte for byte.
func rawKey(v bson.RawValue) string {
	return string(rune(v.Type)) + string(v.Value)
}
