package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// splitLargeEventName is the stage that splits change events over 16 MB
// into fragments.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/changeStreamSplitLargeEvent/
const splitLargeEventName = "$changeStreamSplitLargeEvent"

// checkSplitLargeEventSpec applies mongod's rule on the stage's argument:
// an empty document (7182800).
func checkSplitLargeEventSpec(spec bson.RawValue) error {
	d, ok := spec.DocumentOK()
	if !ok {
		return mongoerr.New(mongoerr.Code(7182800), "$changeStreamSplitLargeEvent spec should be an empty object")
	}
	if _, err := d.IndexErr(0); err == nil {
		return mongoerr.New(mongoerr.Code(7182800), "$changeStreamSplitLargeEvent spec should be an empty object")
	}
	return nil
}

// StripSplitLargeEvent takes $changeStreamSplitLargeEvent off the stages
// that follow $changeStream and reports whether it was there. It must be
// the last stage, and appear once (7182802); its argument must be {}.
func StripSplitLargeEvent(stages []bson.Raw) ([]bson.Raw, bool, error) {
	for i, raw := range stages {
		e, err := raw.IndexErr(0)
		if err != nil || e.Key() != splitLargeEventName {
			continue
		}
		if err := checkSplitLargeEventSpec(e.Value()); err != nil {
			return nil, false, err
		}
		if i != len(stages)-1 {
			return nil, false, mongoerr.New(mongoerr.Code(7182802), "$changeStreamSplitLargeEvent must be the last stage in the pipeline")
		}
		return stages[:i], true, nil
	}
	return stages, false, nil
}

func init() {
	// The command layer takes the stage off a change stream's pipeline
	// (StripSplitLargeEvent); anywhere else it is out of place.
	register(splitLargeEventName, flagNoFacet|flagNoLookup, func(pc *parseCtx, spec bson.RawValue) (stage, error) {
		if err := checkSplitLargeEventSpec(spec); err != nil {
			return nil, err
		}
		return nil, mongoerr.New(mongoerr.IllegalOperation, "$changeStreamSplitLargeEvent can only be used in a $changeStream pipeline")
	})
}
