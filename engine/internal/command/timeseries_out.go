package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

// outToTimeseries reports whether pl's write goes to a time series
// through $out (MongoDB 7.0.3+): a $out with a timeseries option, or a
// $out into an existing time series. Such a target is checked by
// ReplaceTimeseries instead of refused as a view.
func (e *Env) outToTimeseries(pl *agg.Pipeline, ns string) bool {
	return pl.OutTimeseries() || (pl.EndsInOut() && e.tsColl(ns) != nil)
}

// ReplaceTimeseries replaces the time series ns with docs as $out does
// (MongoDB 7.0.3+): the measurements go into a temporary time series
// with ns's options (or those of opts when ns does not exist), which then
// replaces ns in one write. Errors: 7268700 when ns exists and is not a
// time series, 7406103 when opts differ from the existing series'.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/out/
func (h *aggHost) ReplaceTimeseries(ctx context.Context, ns string, opts bson.Raw, docs agg.Source) error {
	defer docs.Close()
	env := h.r.Env
	existing := env.tsColl(ns)
	o, expire := (*timeseries.Options)(nil), (*int64)(nil)
	switch {
	case existing != nil:
		o, expire = existing.opts, existing.expire
		if opts != nil {
			want, err := timeseries.Parse("$out", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: opts})
			if err != nil {
				return err
			}
			if !sameBucketing(want, o) {
				return mongoerr.Newf(mongoerr.Code(7406103), "Time-series options inputted must match the existing time-series collection. Received: %s Found: %s", formatDoc(opts), formatDoc(mustDoc(o.Doc())))
			}
		}
	case env.Store.Collection(ns) != nil:
		return mongoerr.New(mongoerr.Code(7268700), "Cannot create a time-series collection from a non time-series collection or view.")
	default:
		var err error
		if o, err = timeseries.Parse("$out", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: opts}); err != nil {
			return err
		}
	}
	db, coll := storage.SplitNS(ns)
	tmpName := "tmp.agg_out." + randomSuffix()
	tmp := &tsColl{ns: db + "." + tmpName, bucketsNS: db + "." + bucketsPrefix + tmpName, opts: o, expire: expire}
	view, buckets := tsCatalogOptions(o, expire, nil)
	err := env.Store.WriteContext(ctx, func(w *storage.Writer) error {
		if _, err := w.CreateCollection(tmp.bucketsNS, buckets); err != nil {
			return err
		}
		if existing != nil {
			if old := w.Collection(existing.bucketsNS); old != nil {
				for _, ix := range old.Indexes[1:] {
					sp, err := index.ParseSpec(ix.Spec)
					if err != nil {
						return err
					}
					if _, err := w.CreateIndex(tmp.bucketsNS, sp); err != nil {
						return err
					}
				}
			}
		} else if o.HasMeta() {
			sp, err := tsIndexSpec(o, o.DefaultIndexKey(), o.MetaField+"_1_"+o.TimeField+"_1")
			if err != nil {
				return err
			}
			if _, err := w.CreateIndex(tmp.bucketsNS, sp); err != nil {
				return err
			}
		}
		_, err := w.CreateCollection(tmp.ns, view)
		return err
	})
	if err != nil {
		return err
	}
	drop := func() {
		_ = env.Store.WriteContext(ctx, func(w *storage.Writer) error {
			_ = w.DropCollection(tmp.bucketsNS)
			return w.DropCollection(tmp.ns)
		})
	}
	for done := false; !done; {
		var ms []timeseries.Measurement
		for len(ms) < outBatch {
			d, err := docs.Next(ctx)
			if err != nil {
				drop()
				return err
			}
			if d == nil {
				done = true
				break
			}
			m, err := tmp.measurement(d)
			if err != nil {
				drop()
				return err
			}
			ms = append(ms, m)
		}
		if len(ms) == 0 {
			continue
		}
		if err := env.Store.WriteContext(ctx, func(w *storage.Writer) error { return env.appendMeasurements(ctx, w, tmp, ms) }); err != nil {
			drop()
			return err
		}
	}
	return env.Store.WriteContext(ctx, func(w *storage.Writer) error {
		for _, n := range []string{ns, db + "." + bucketsPrefix + coll} {
			if w.Collection(n) != nil {
				if err := w.DropCollection(n); err != nil {
					return err
				}
			}
		}
		if err := w.RenameCollection(tmp.bucketsNS, db+"."+bucketsPrefix+coll); err != nil {
			return err
		}
		return w.RenameCollection(tmp.ns, ns)
	})
}

// sameBucketing is mongod's timeseries::optionsAreEqual: same fields, and
// the same spans once granularity defaults are filled in.
func sameBucketing(a, b *timeseries.Options) bool {
	ga, gb := a.Granularity, b.Granularity
	if ga == "" && a.MaxSpan == 3600 && a.Rounding == 60 {
		ga = "seconds"
	}
	if gb == "" && b.MaxSpan == 3600 && b.Rounding == 60 {
		gb = "seconds"
	}
	return a.TimeField == b.TimeField && a.MetaField == b.MetaField && ga == gb && a.MaxSpan == b.MaxSpan && a.Rounding == b.Rounding
}

// mustDoc marshals d, which cannot fail for the documents built here.
func mustDoc(d bson.D) bson.Raw {
	b, _ := bson.Marshal(d)
	return b
}
