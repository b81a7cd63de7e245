package timeseries

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// TestPartialFilter checks the translation of partialFilterExpression:
// meta predicates renamed, measurement bounds, a dotted measurement path
// reduced to the presence of its top-level field (the Divergence in
// partialCompare), and mongod's refusals.
func TestPartialFilter(t *testing.T) {
	o := opts(t, true)
	cases := []struct {
		in     bson.D
		want   string
		metric bool
		code   int
	}{
		{in: bson.D{{Key: "m.a", Value: 1}}, want: `{"meta.a": {"$numberInt":"1"}}`},
		{in: bson.D{{Key: "v", Value: bson.D{{Key: "$lt", Value: 3}}}}, want: `{"$or": [{"control.min.v": {"$lt": {"$numberInt":"3"}}},{"control.min.v": {"$type": "array"}}]}`, metric: true},
		{in: bson.D{{Key: "o.a", Value: bson.D{{Key: "$gt", Value: 1}}}}, want: `{"control.min.o": {"$exists": true}}`, metric: true},
		{in: bson.D{{Key: "v", Value: bson.D{{Key: "$type", Value: "int"}}}}, code: 5916301},
		{in: bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: "v", Value: 1}}}}}, code: 5916301},
		{in: bson.D{{Key: "v", Value: bson.D{{Key: "$in", Value: bson.A{bson.Regex{Pattern: "a"}}}}}}, code: 5916301},
		{in: bson.D{{Key: "t", Value: "x"}}, code: 5916301},
	}
	for _, c := range cases {
		raw, _ := bson.Marshal(c.in)
		got, metric, err := o.PartialFilter(raw)
		if c.code != 0 {
			if me, ok := err.(*mongoerr.Error); !ok || int(me.Code) != c.code {
				t.Errorf("%v: err %v, want code %d", c.in, err, c.code)
			}
			continue
		}
		if err != nil || got.String() != c.want || metric != c.metric {
			t.Errorf("%v: got %s %v %v, want %s %v", c.in, got, metric, err, c.want, c.metric)
		}
	}
}
