package agg

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("$out", flagLast|flagNoFacet|flagNoLookup|flagWrites, parseOut)
}

// stageOut is {$out: "coll"} or {$out: {db, coll}}: the pipeline's
// documents replace the target collection's atomically
// (Host.ReplaceCollection keeps its indexes); it returns no documents.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/out/
type stageOut struct {
	spec bson.RawValue
	ns   string
	ts   bson.Raw // the timeseries option (MongoDB 7.0.3+), nil when absent
}

// parseOut parses $out: TypeMismatch for a spec that is neither string
// nor document, the IDL codes for a bad document, InvalidNamespace (73)
// for a bad name, 17385 for a system collection.
func parseOut(pc *parseCtx, spec bson.RawValue) (stage, error) {
	var ts bson.Raw
	ns, err := parseTarget(pc, "$out", "$out", spec, func(k string, v bson.RawValue) (bool, error) {
		if k == "timeseries" {
			var err error
			ts, err = parseOutTimeseries(v)
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if _, coll := splitNS(ns); strings.HasPrefix(coll, "system.") {
		return nil, mongoerr.Newf(mongoerr.Code(17385), "Can't $out to special collection: %s", coll)
	}
	return &stageOut{spec: spec, ns: ns, ts: ts}, nil
}

func (s *stageOut) name() string   { return "$out" }
func (s *stageOut) target() string { return s.ns }

func (s *stageOut) explain() bson.D {
	db, coll := splitNS(s.ns)
	d := bson.D{{Key: "db", Value: db}, {Key: "coll", Value: coll}}
	if s.ts != nil {
		d = append(d, bson.E{Key: "timeseries", Value: s.ts})
	}
	return bson.D{{Key: "$out", Value: d}}
}

func (s *stageOut) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	done := false
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if done {
			return nil, nil
		}
		done = true
		if s.ts != nil {
			return nil, replaceTimeseries(ctx, rc.host, s.ns, s.ts, in)
		}
		return nil, rc.host.ReplaceCollection(ctx, s.ns, in)
	}, close: in.Close}, nil
}
