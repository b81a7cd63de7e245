package extref

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// verifyBatch is how many referencing documents Verify compares per
// source lookup ($in of their distinct source ids).
const verifyBatch = 256

// maxDetails bounds the lines of a pattern.Result.
const maxDetails = 200

// Stale is one referencing document whose copy disagrees with its source.
type Stale struct {
	ID       bson.RawValue // _id of the referencing document
	SourceID bson.RawValue // <Field>._id
	Fields   []string      // copied fields that differ, in Config order
}

// Orphan is one referencing document whose source is gone.
type Orphan struct {
	ID       bson.RawValue // _id of the referencing document
	SourceID bson.RawValue // <Field>._id, the missing source
}

// Report is the outcome of Verify or Repair.
type Report struct {
	// Checked counts the live referencing documents compared.
	Checked int64
	// Stale lists the live copies that disagree with their source.
	Stale []Stale
	// Orphans lists the live referencing documents whose source no
	// longer exists (a delete whose policy was not applied).
	Orphans []Orphan
	// Repaired counts the referencing documents Repair rewrote, deleted
	// (Cascade) or detached (Detach).
	Repaired int64
}

// OK reports whether Verify found nothing to fix.
func (rep Report) OK() bool { return len(rep.Stale) == 0 && len(rep.Orphans) == 0 }

// Verify compares every live (non-frozen, not detached) referencing
// document's copy with its source and reports those that disagree and
// those whose source is gone. A field present on one side only, or with
// another BSON type or value, disagrees. It reads the referencing
// collection in <Field>._id order through the index and the sources with
// one $in query per batch; it writes nothing. Copies being fanned out
// while Verify runs may be reported.
func (r *Reference[S, R, C]) Verify(ctx context.Context) (Report, error) {
	var rep Report
	if err := r.verify(ctx, &rep); err != nil {
		return rep, fmt.Errorf("extref: verify: %w", err)
	}
	return rep, nil
}

// Repair runs Verify, then brings every source with a stale copy up to
// date as Sync does, and applies Config.OnDelete to the orphans of each
// source still missing: Cascade deletes them, Detach detaches them;
// Refuse leaves them for the application to resolve (re-create the
// source, or delete them). The returned Report is Verify's, with
// Repaired set.
func (r *Reference[S, R, C]) Repair(ctx context.Context) (Report, error) {
	var rep Report
	if err := r.verify(ctx, &rep); err != nil {
		return rep, fmt.Errorf("extref: repair: %w", err)
	}
	if err := r.repair(ctx, &rep); err != nil {
		return rep, fmt.Errorf("extref: repair: %w", err)
	}
	return rep, nil
}

// repair fixes what verify found.
func (r *Reference[S, R, C]) repair(ctx context.Context, rep *Report) error {
	done := make(map[string]bool)
	for _, s := range rep.Stale {
		key := rawKey(s.SourceID)
		if done[key] {
			continue
		}
		done[key] = true
		src, err := r.readSource(ctx, s.SourceID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since Verify read it: its copies are orphans now
		}
		if err != nil {
			return err
		}
		fo, err := r.settle(ctx, src)
		rep.Repaired += fo.Modified
		if err != nil {
			return err
		}
	}
	if r.cfg.OnDelete == Refuse || len(rep.Orphans) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var sources []bson.RawValue
	for _, o := range rep.Orphans {
		if !seen[rawKey(o.SourceID)] {
			seen[rawKey(o.SourceID)] = true
			sources = append(sources, o.SourceID)
		}
	}
	for _, id := range sources {
		ok, err := r.exists(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			continue // re-created since Verify: Sync it
		}
		n, err := r.release(ctx, id)
		rep.Repaired += n
		if err != nil {
			return err
		}
	}
	return nil
}

// Check is Verify (repair false) or Repair (repair true) as a
// pattern.Result, for pattern.Source.Check: Problems counts the stale
// copies and the orphans, Details names them.
func (r *Reference[S, R, C]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	var rep Report
	var err error
	if repair {
		rep, err = r.Repair(ctx)
	} else {
		rep, err = r.Verify(ctx)
	}
	res := pattern.Result{Name: r.Name(), Checked: int(rep.Checked),
		Problems: len(rep.Stale) + len(rep.Orphans), Repaired: int(rep.Repaired)}
	for _, s := range rep.Stale {
		if len(res.Details) == maxDetails {
			break
		}
		res.Details = append(res.Details, fmt.Sprintf("stale %v: source %v: %v differ", s.ID, s.SourceID, s.Fields))
	}
	for _, o := range rep.Orphans {
		if len(res.Details) == maxDetails {
			break
		}
		res.Details = append(res.Details, fmt.Sprintf("orphan %v: source %v gone (policy %v)", o.ID, o.SourceID, r.cfg.OnDelete))
	}
	return res, err
}

// verify streams the tracked referencing documents and compares them in
// batches; Verify and Repair wrap its errors with their verb.
func (r *Reference[S, R, C]) verify(ctx context.Context, rep *Report) error {
	filter := r.tracked(bson.D{{Key: "$exists", Value: true}})
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
func (r *Reference[S, R, C]) compare(ctx context.Context, batch []bson.Raw, rep *Report) error {
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
	sources, err := r.readSources(ctx, ids)
	if err != nil {
		return err
	}
	for _, d := range batch {
		rep.Checked++
		ref, _ := d.Lookup(r.cfg.Field).DocumentOK()
		srcID := ref.Lookup("_id")
		src, ok := sources[rawKey(srcID)]
		if !ok {
			rep.Orphans = append(rep.Orphans, Orphan{ID: d.Lookup("_id"), SourceID: srcID})
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

// readSources reads the copied fields of the source documents ids (one
// $in query) and returns them by rawKey of their _id.
func (r *Reference[S, R, C]) readSources(ctx context.Context, ids bson.A) (map[string]bson.Raw, error) {
	cur, err := r.sources.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(r.projection()))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	out := make(map[string]bson.Raw, len(ids))
	for cur.Next(ctx) {
		out[rawKey(cur.Current.Lookup("_id"))] = append(bson.Raw(nil), cur.Current...)
	}
	return out, cur.Err()
}

// rawKey is a map key for a BSON value: its type and bytes. Values that
// compare equal in MongoDB but differ in type (int32 1 and double 1.0)
// get different keys, which is right for _ids copied byte for byte.
func rawKey(v bson.RawValue) string {
	return string(rune(v.Type)) + string(v.Value)
}
