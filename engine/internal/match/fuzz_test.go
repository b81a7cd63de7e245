package match_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

var fuzzFilters = []string{
	`{"a": 1}`, `{"a.b": {"$gt": 1, "$lt": {"$numberDecimal": "5"}}}`,
	`{"$or": [{"a": null}, {"b": {"$exists": false}}]}`,
	`{"a": {"$elemMatch": {"b": {"$in": [1, "x", null]}}}}`,
	`{"a": {"$all": [1, [2]]}, "b": {"$size": 2}}`,
	`{"a": {"$regex": "^x.*y$", "$options": "imsx"}}`,
	`{"a.0.b": {"$type": ["number", "array"]}}`,
	`{"a": {"$not": {"$mod": [3, 1]}}}`,
	`{"a": {"$bitsAnySet": [1, 70]}}`,
	`{"$nor": [{"a": {"$ne": 1}}], "a": {"$elemMatch": {"$elemMatch": {"$gte": 0}}}}`,
}

var fuzzDocs = []string{
	`{}`, `{"a": 1}`, `{"a": [1, [2, 3], {"b": 1}, null]}`,
	`{"a": {"b": [{"c": 1}, 2]}, "b": []}`,
	`{"a": [{"0": {"b": 1}}, {"b": "x"}], "b": {"$numberDouble": "NaN"}}`,
	`{"a": "xy\ny"}`,
}

func FuzzCompile(f *testing.F) {
	for _, s := range fuzzFilters {
		f.Add([]byte(raw(f, s)))
	}
	f.Fuzz(func(t *testing.T, filter []byte) {
		if _, err := match.Compile(bson.Raw(filter)); err != nil {
			if me := mongoerr.As(err); me.Code == mongoerr.InternalError {
				t.Fatalf("compile returned a non-MongoDB error: %v", err)
			}
		}
	})
}

func FuzzMatch(f *testing.F) {
	for _, fs := range fuzzFilters {
		for _, ds := range fuzzDocs {
			f.Add([]byte(raw(f, fs)), []byte(raw(f, ds)))
		}
	}
	f.Fuzz(func(t *testing.T, filter, doc []byte) {
		m, err := match.Compile(bson.Raw(filter))
		if err != nil {
			return
		}
		if bsonkit.Validate(doc) != nil {
			return
		}
		ok, pos := m.MatchPos(bson.Raw(doc))
		if ok != m.Match(bson.Raw(doc)) || (!ok && pos != -1) {
			t.Fatalf("MatchPos and Match disagree")
		}
	})
}
