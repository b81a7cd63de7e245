package match_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
)

// TestExplainShapes checks validator error details for query operators,
// including the chosen divergences: an explicit $eq reports specifiedAs
// {path: value}, and a $not of one equality reads as $ne.
func TestExplainShapes(t *testing.T) {
	cases := []struct{ filter, doc, want string }{
		{`{"a": {"$eq": 1}}`, `{"a": 2}`,
			`{"operatorName":"$eq","specifiedAs":{"a":1},"reason":"comparison failed","consideredValue":2}`},
		{`{"a": {"$not": {"$eq": 1}}}`, `{"a": 1}`,
			`{"operatorName":"$ne","specifiedAs":{"a":{"$ne":1}},"reason":"comparison succeeded","consideredValue":1}`},
		{`{"a": {"$gt": 1}}`, `{}`,
			`{"operatorName":"$gt","specifiedAs":{"a":{"$gt":1}},"reason":"field was missing"}`},
		{`{"a": {"$exists": false}}`, `{"a": 1}`,
			`{"operatorName":"$exists","specifiedAs":{"a":{"$exists":false}},"reason":"path does exist"}`},
		{`{"a": {"$type": "string"}}`, `{"a": [1, 2.5]}`,
			`{"operatorName":"$type","specifiedAs":{"a":{"$type":"string"}},"reason":"type did not match","consideredValues":[1,2.5],"consideredTypes":["double","int"]}`},
		{`{"$or": [{"a": 1}, {"b": 1}]}`, `{"a": 2}`,
			`{"operatorName":"$or","clausesNotSatisfied":[{"index":0,"details":{"operatorName":"$eq","specifiedAs":{"a":1},"reason":"comparison failed","consideredValue":2}},{"index":1,"details":{"operatorName":"$eq","specifiedAs":{"b":1},"reason":"field was missing"}}]}`},
	}
	for _, c := range cases {
		f, err := match.Compile(raw(t, c.filter))
		if err != nil {
			t.Fatal(err)
		}
		doc := raw(t, c.doc)
		if f.Match(doc) {
			t.Fatalf("%s matched %s", c.filter, c.doc)
		}
		got, err := bson.MarshalExtJSON(f.Explain(doc), false, false)
		if err != nil || string(got) != c.want {
			t.Errorf("Explain(%s, %s) =\n%s\nwant\n%s", c.filter, c.doc, got, c.want)
		}
	}
}
