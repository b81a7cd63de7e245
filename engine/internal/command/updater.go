package command

import (
	"bytes"
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/update"
)

// updater is a compiled update statement's change: an update document or
// replacement (package update) or a pipeline (package agg). It is safe
// for concurrent use.
type updater interface {
	// apply returns doc after the change and whether it changed; pos is
	// the filter's elemMatchKey for the positional "$".
	apply(ctx context.Context, doc bson.Raw, pos int, now time.Time) (bson.Raw, bool, error)
	// upsert returns the document an upsert inserts when filter matched
	// nothing.
	upsert(ctx context.Context, filter bson.Raw, now time.Time) (bson.Raw, error)
	isReplacement() bool
}

// compileUpdate compiles the u of an update statement: a document, or a
// pipeline whose let variables (evaluated, nil for none) and $$NOW are
// the command's. arrayFilters do not go with a pipeline (FailedToParse,
// as mongod).
// https://www.mongodb.com/docs/v7.0/tutorial/update-documents-with-aggregation-pipeline/
func compileUpdate(u bson.RawValue, arrayFilters []bson.Raw, let bson.Raw, now time.Time, ct bson.Timestamp) (updater, error) {
	if u.Type != bson.TypeArray {
		x, err := update.Compile(u, arrayFilters)
		if err != nil {
			return nil, err
		}
		return docUpdater{x}, nil
	}
	if len(arrayFilters) > 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "arrayFilters may not be specified for pipeline-style updates")
	}
	stages, err := docArray("update", "u", u)
	if err != nil {
		return nil, err
	}
	p, err := agg.ParseUpdatePipeline(stages, let)
	if err != nil {
		return nil, err
	}
	p.SetNow(now, ct)
	return pipeUpdater{p}, nil
}

// docUpdater is an update document or a replacement.
type docUpdater struct{ u *update.Update }

func (d docUpdater) apply(ctx context.Context, doc bson.Raw, pos int, now time.Time) (bson.Raw, bool, error) {
	return d.u.ApplyContext(ctx, doc, pos, now)
}

func (d docUpdater) upsert(_ context.Context, filter bson.Raw, now time.Time) (bson.Raw, error) {
	return d.u.Upsert(filter, now)
}

func (d docUpdater) isReplacement() bool { return d.u.IsReplacement() }

// pipeUpdater is a pipeline-style update.
type pipeUpdater struct{ p *agg.UpdatePipeline }

// noop is the update an upserting pipeline starts from: the filter's
// equalities, nothing more.
var noop, _ = update.Compile(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bson.Raw{5, 0, 0, 0, 0}}, nil)

func (p pipeUpdater) apply(ctx context.Context, doc bson.Raw, _ int, _ time.Time) (bson.Raw, bool, error) {
	out, err := p.p.Apply(ctx, doc)
	if err != nil {
		return nil, false, err
	}
	if bytes.Equal(out, doc) {
		return doc, false, nil
	}
	return p.checkID(doc, out)
}

// checkID keeps the pipeline from changing _id (ImmutableField, as
// mongod) and puts _id back first when a stage moved it.
func (p pipeUpdater) checkID(doc, out bson.Raw) (bson.Raw, bool, error) {
	before, err1 := doc.LookupErr("_id")
	after, err2 := out.LookupErr("_id")
	if err1 == nil && (err2 != nil || !before.Equal(after)) {
		return nil, false, mongoerr.New(mongoerr.ImmutableField, "After applying the update, the (immutable) field '_id' was found to have been altered to _id: "+formatValue(after))
	}
	fixed, err := prepareInsert(out)
	if err != nil {
		return nil, false, err
	}
	return fixed, true, nil
}

func (p pipeUpdater) upsert(ctx context.Context, filter bson.Raw, now time.Time) (bson.Raw, error) {
	seed, err := noop.Upsert(filter, now)
	if err != nil {
		return nil, err
	}
	out, err := p.p.Apply(ctx, seed)
	if err != nil {
		return nil, err
	}
	if _, err := filter.LookupErr("_id"); err == nil {
		if out, _, err = p.checkID(seed, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p pipeUpdater) isReplacement() bool { return false }
