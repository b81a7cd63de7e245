package agg

import (
	"strings"
	"testing"
)

// TestMatchSwapsAhead checks mongod's pushMatchBefore rules: a $match
// after $lookup, $unwind or $addFields moves ahead of it when it reads
// none of the paths the stage modifies, and a $match is split into the
// clauses that can move and those that cannot.
func TestMatchSwapsAhead(t *testing.T) {
	lookup := `{"$lookup": {"from": "o", "localField": "k", "foreignField": "k", "as": "j"}}`
	letLookup := `{"$lookup": {"from": "o", "let": {"kk": "$k"}, "pipeline": [{"$match": {"$expr": {"$eq": ["$k", "$$kk"]}}}], "as": "j"}}`
	cases := []struct {
		pipeline string
		filter   string // the pushed-down filter
		rest     string // the remaining stages' names
	}{
		{`[` + lookup + `, {"$match": {"_id": 5}}]`, `{"_id": {"$numberInt":"5"}}`, "$lookup"},
		{`[` + lookup + `, {"$match": {"k": 5}}]`, `{"k": {"$numberInt":"5"}}`, "$lookup"},
		{`[` + lookup + `, {"$match": {"j": {"$size": 0}}}]`, ``, "$lookup $match"},
		{`[` + lookup + `, {"$match": {"j.x": 1}}]`, ``, "$lookup $match"},
		{`[` + lookup + `, {"$match": {"_id": 5, "j.x": 1}}]`, `{"_id": {"$numberInt":"5"}}`, "$lookup $match"},
		{`[` + lookup + `, {"$match": {"a": 1, "b": 2, "j": []}}]`, `{"$and": [{"a": {"$numberInt":"1"}},{"b": {"$numberInt":"2"}}]}`, "$lookup $match"},
		{`[` + lookup + `, {"$match": {"$expr": {"$eq": ["$$ROOT", null]}}}]`, ``, "$lookup $match"},
		{`[` + lookup + `, {"$match": {"$jsonSchema": {"required": ["j"]}}}]`, ``, "$lookup $match"},
		{`[{"$addFields": {"c": 1}}, {"$match": {"a": 1, "$jsonSchema": {"required": ["c"]}}}]`, `{"a": {"$numberInt":"1"}}`, "$addFields $match"},
		{`[` + letLookup + `, {"$match": {"_id": 5}}]`, `{"_id": {"$numberInt":"5"}}`, "$lookup"},
		{`[` + letLookup + `, {"$match": {"j.k": 5}}]`, ``, "$lookup $match"},
		{`[` + lookup + `, {"$unwind": "$j"}, {"$match": {"_id": 5}}]`, `{"_id": {"$numberInt":"5"}}`, "$lookup"},
		{`[{"$unwind": "$arr"}, {"$match": {"a": 1}}]`, `{"a": {"$numberInt":"1"}}`, "$unwind"},
		{`[{"$unwind": "$arr"}, {"$match": {"arr": 1}}]`, ``, "$unwind $match"},
		{`[{"$unwind": {"path": "$arr", "includeArrayIndex": "i"}}, {"$match": {"i": 0, "a": 1}}]`, `{"a": {"$numberInt":"1"}}`, "$unwind $match"},
		{`[{"$addFields": {"c": 1}}, {"$match": {"c": 1, "a": 2}}]`, `{"a": {"$numberInt":"2"}}`, "$addFields $match"},
		{`[{"$addFields": {"c": 1}}, {"$match": {"c": 1}}]`, ``, "$addFields $match"},
		{`[` + lookup + `, {"$addFields": {"c": 1}}, {"$sort": {"a": 1}}, {"$match": {"_id": 5, "c": 1}}]`, `{"_id": {"$numberInt":"5"}}`, "$lookup $addFields $match $sort"},
	}
	for _, c := range cases {
		p, err := Parse(stagesOf(t, c.pipeline), Options{DB: "test", Coll: "c"})
		if err != nil {
			t.Fatalf("%s: %v", c.pipeline, err)
		}
		q := p.Query()
		if got := rawString(q.Filter); got != c.filter {
			t.Errorf("%s:\n filter %s\n want   %s", c.pipeline, got, c.filter)
		}
		var names []string
		for _, st := range p.stages {
			names = append(names, st.name())
		}
		if got := strings.Join(names, " "); got != c.rest {
			t.Errorf("%s:\n stages %s\n want   %s", c.pipeline, got, c.rest)
		}
	}
}
