package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

// TimeseriesOut is implemented by hosts that can $out into a time series
// collection (MongoDB 7.0.3+): ReplaceTimeseries replaces the time series
// ns with docs as measurements, creating it with the options opts (a
// create-style timeseries document; nil to keep the existing series').
type TimeseriesOut interface {
	ReplaceTimeseries(ctx context.Context, ns string, opts bson.Raw, docs Source) error
}

// parseOutTimeseries checks $out's timeseries option as create does.
func parseOutTimeseries(v bson.RawValue) (bson.Raw, error) {
	o, err := timeseries.Parse("$out", v)
	if err != nil {
		return nil, err
	}
	if err := o.CheckFields("$out"); err != nil {
		return nil, err
	}
	return v.Document(), nil
}

// replaceTimeseries runs $out with a timeseries option through the host.
func replaceTimeseries(ctx context.Context, h Host, ns string, opts bson.Raw, docs Source) error {
	th, ok := h.(TimeseriesOut)
	if !ok {
		docs.Close()
		return mongoerr.New(mongoerr.NotImplemented, "$out to a time series collection is not supported here")
	}
	return th.ReplaceTimeseries(ctx, ns, opts, docs)
}

// OutTimeseries reports whether the pipeline ends in $out with a
// timeseries option, whose target may be a time series.
func (p *Pipeline) OutTimeseries() bool {
	if n := len(p.stages); n > 0 {
		if o, ok := p.stages[n-1].(*stageOut); ok {
			return o.ts != nil
		}
	}
	return false
}

// EndsInOut reports whether the pipeline's last stage is $out.
func (p *Pipeline) EndsInOut() bool {
	if n := len(p.stages); n > 0 {
		_, ok := p.stages[n-1].(*stageOut)
		return ok
	}
	return false
}
