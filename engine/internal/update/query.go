package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
)

// filterQuery adapts a compiled match.Filter.
type filterQuery struct{ f *match.Filter }

func (q filterQuery) matchDoc(doc bson.Raw) bool { return q.f.Match(doc) }

func (q filterQuery) matchPos(doc bson.Raw) (bool, int) { return q.f.MatchPos(doc) }

// compileQuery compiles a query filter with the match package; its errors
// are match's *mongoerr.Error values.
func compileQuery(filter bson.Raw) (queryMatcher, error) {
	f, err := match.Compile(filter)
	if err != nil {
		return nil, err
	}
	return filterQuery{f}, nil
}
