package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	for _, n := range []string{"$collStats", "$indexStats", "$planCacheStats", "$currentOp", "$listLocalSessions"} {
		name := n
		register(name, flagFirst|flagSource|flagNoFacet|flagNoLookup, func(_ *parseCtx, spec bson.RawValue) (stage, error) {
			b := expr.NewDocBuilder()
			b.Append(name, spec)
			return &stageStatsSource{stageName: name, doc: b.Doc()}, nil
		})
	}
}

// stageStatsSource is a source stage that reads server state ($collStats,
// $indexStats, $planCacheStats, $currentOp, $listLocalSessions); the
// host answers it (Host.StatsSource) and validates its options.
type stageStatsSource struct {
	stageName string
	doc       bson.Raw
}

func (s *stageStatsSource) name() string { return s.stageName }
func (s *stageStatsSource) explain() bson.D {
	return bson.D{{Key: s.stageName, Value: s.doc.Lookup(s.stageName)}}
}

func (s *stageStatsSource) open(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	if in != nil {
		in.Close()
	}
	return rc.host.StatsSource(ctx, nsOf(rc.opts.DB, rc.opts.Coll), s.doc)
}
