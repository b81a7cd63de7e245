package match_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/internal/scripttest"
)

func raw(t testing.TB, s string) bson.Raw {
	t.Helper()
	r, err := scripttest.ParseDoc(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMatchOperators(t *testing.T) {
	cases := []struct {
		filter, doc string
		want        bool
	}{
		{`{}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": {"$numberLong": "1"}}`, true},
		{`{"a": 1}`, `{"a": 1.0}`, true},
		{`{"a": 1}`, `{"a": {"$numberDecimal": "1.0"}}`, true},
		{`{"a": 0}`, `{"a": -0.0}`, true},
		{`{"a": 1}`, `{"a": [2, 1]}`, true},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, true},
		{`{"a": [1, 2]}`, `{"a": [2, 1]}`, false},
		{`{"a": [1, 2]}`, `{"a": [[1, 2], 3]}`, true},
		{`{"a": null}`, `{}`, true},
		{`{"a": null}`, `{"a": null}`, true},
		{`{"a": null}`, `{"a": {"$undefined": true}}`, true},
		{`{"a": null}`, `{"a": []}`, false},
		{`{"a": null}`, `{"a": [1, null]}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}, {"c": 1}]}`, true},
		{`{"a.b": null}`, `{"a": [1, 2]}`, false},
		{`{"a.b": null}`, `{"a": 5}`, true},
		{`{"a": {"$ne": null}}`, `{}`, false},
		{`{"a": {"$ne": 1}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$ne": 3}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$gt": 1}}`, `{"a": [0, 2]}`, true},
		{`{"a": {"$gt": 1, "$lt": 2}}`, `{"a": [0, 3]}`, true},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 2}}}`, `{"a": [0, 3]}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}`, `{"a": [0, 2]}`, true},
		{`{"a": {"$gt": "a"}}`, `{"a": 5}`, false},
		{`{"a": {"$gte": null}}`, `{}`, true},
		{`{"a": {"$gt": null}}`, `{"a": null}`, false},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{"a": "x"}`, true},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": null}`, true},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": {"$minKey": 1}}`, false},
		{`{"a": {"$numberDouble": "NaN"}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$numberDouble": "NaN"}}`, `{"a": {"$numberDecimal": "NaN"}}`, true},
		{`{"a": {"$lt": {"$numberDouble": "NaN"}}}`, `{"a": 1}`, false},
		{`{"a": {"$gte": {"$numberDouble": "NaN"}}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$gt": {"$numberDouble": "-Infinity"}}}`, `{"a": {"$numberDouble": "NaN"}}`, false},
		{`{"a": {"$lt": {"$numberLong": "9007199254740993"}}}`, `{"a": 9007199254740992.0}`, true},
		{`{"a": {"$numberDecimal": "0.1"}}`, `{"a": 0.1}`, false},
		{`{"a": {"$in": [1, "x"]}}`, `{"a": "x"}`, true},
		{`{"a": {"$in": [null]}}`, `{}`, true},
		{`{"a": {"$in": [null]}}`, `{"a": {"$undefined": true}}`, true},
		{`{"a": {"$in": [/^x/]}}`, `{"a": "xyz"}`, true},
		{`{"a": {"$in": []}}`, `{"a": 1}`, false},
		{`{"a": {"$nin": [1]}}`, `{}`, true},
		{`{"a": {"$nin": [1]}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$in": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"$or": [{"a": 1}, {"b": 1}]}`, `{"b": 1}`, true},
		{`{"$nor": [{"a": 1}, {"b": 1}]}`, `{"b": 1}`, false},
		{`{"$and": [{"a": 1}, {"b": 1}]}`, `{"a": 1, "b": 1}`, true},
		{`{"a": {"$not": {"$gt": 1}}}`, `{"a": 0}`, true},
		{`{"a": {"$not": {"$gt": 1}}}`, `{}`, true},
		{`{"a": {"$not": /^x/}}`, `{"a": "yx"}`, true},
		{`{"a": {"$exists": true}}`, `{"a": null}`, true},
		{`{"a": {"$exists": false}}`, `{"b": 1}`, true},
		{`{"a": {"$exists": 0}}`, `{"a": 1}`, false},
		{`{"a.b": {"$exists": true}}`, `{"a": [{"c": 1}, {"b": 1}]}`, true},
		{`{"a.b": {"$exists": false}}`, `{"a": []}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": []}`, true},
		{`{"a": {"$type": "number"}}`, `{"a": {"$numberDecimal": "1"}}`, true},
		{`{"a": {"$type": 2}}`, `{"a": ["x"]}`, true},
		{`{"a": {"$type": ["int", "string"]}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": -1}}`, `{"a": {"$minKey": 1}}`, true},
		{`{"a": {"$type": "null"}}`, `{}`, false},
		{`{"a": {"$size": 2}}`, `{"a": [1, [2, 3]]}`, true},
		{`{"a": {"$size": 0}}`, `{"a": []}`, true},
		{`{"a": {"$size": 1}}`, `{"a": 1}`, false},
		{`{"a.b": {"$size": 2}}`, `{"a": [{"b": [1, 2]}]}`, true},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3, 1]}`, true},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3]}`, false},
		{`{"a": {"$all": []}}`, `{"a": []}`, false},
		{`{"a": {"$all": [[1]]}}`, `{"a": [[1], 2]}`, true},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"c": 1}}]}}`, `{"a": [{"b": 1}, {"c": 1}]}`, true},
		{`{"a": {"$elemMatch": {"b": 1, "c": 1}}}`, `{"a": [{"b": 1}, {"c": 1}]}`, false},
		{`{"a": {"$elemMatch": {"b": 1, "c": 1}}}`, `{"a": [{"b": 1, "c": 1}]}`, true},
		{`{"a": {"$elemMatch": {}}}`, `{"a": [1, {}]}`, true},
		{`{"a": {"$elemMatch": {}}}`, `{"a": [1]}`, false},
		{`{"a": {"$elemMatch": {"$elemMatch": {"$gt": 2}}}}`, `{"a": [[1], [3]]}`, true},
		{`{"a": {"$elemMatch": {"$not": {"$gt": 2}}}}`, `{"a": [3, 1]}`, true},
		{`{"a": {"$regex": "^A", "$options": "i"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$options": "i", "$regex": "^A"}}`, `{"a": "abc"}`, true},
		{`{"a": /b$/}`, `{"a": "ab\n"}`, true},
		{`{"a": /b\Z/}`, `{"a": "ab\n"}`, true},
		{`{"a": /b\z/}`, `{"a": "ab\n"}`, false},
		{`{"a": /^b/m}`, `{"a": "a\nb"}`, true},
		{`{"a": /a.b/s}`, `{"a": "a\nb"}`, true},
		{`{"a": /a.b/}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": " a b # comment\n c", "$options": "x"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "a\\sb"}}`, `{"a": "a\u000bb"}`, true},
		{`{"a": /x/}`, `{"a": 5}`, false},
		{`{"a": /x/}`, `{"a": {"$symbol": "x"}}`, true},
		{`{"a": /x/i}`, `{"a": {"$regularExpression": {"pattern": "x", "options": "i"}}}`, true},
		{`{"a": /x/}`, `{"a": {"$regularExpression": {"pattern": "x", "options": "i"}}}`, false},
		{`{"a": {"$eq": /x/}}`, `{"a": "x"}`, false},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": 8}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 9.9}`, true},
		{`{"a": {"$mod": [4, -1]}}`, `{"a": -5}`, true},
		{`{"a": {"$mod": [4.5, 1]}}`, `{"a": 5}`, true},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": "8"}`, false},
		{`{"a": {"$bitsAllSet": [0, 2]}}`, `{"a": 5}`, true},
		{`{"a": {"$bitsAllSet": 5}}`, `{"a": 7}`, true},
		{`{"a": {"$bitsAnyClear": [1]}}`, `{"a": 5}`, true},
		{`{"a": {"$bitsAllSet": [70]}}`, `{"a": -1}`, true},
		{`{"a": {"$bitsAllClear": [70]}}`, `{"a": 1}`, true},
		{`{"a": {"$bitsAnySet": [1]}}`, `{"a": 2.5}`, false},
		{`{"a": {"$bitsAllSet": {"$binary": {"base64": "BQ==", "subType": "00"}}}}`, `{"a": 5}`, true},
		{`{"a": {"$bitsAnySet": [8]}}`, `{"a": {"$binary": {"base64": "AAE=", "subType": "00"}}}`, true},
		{`{"a.0": 1}`, `{"a": [1, 2]}`, true},
		{`{"a.1": 1}`, `{"a": [1, 2]}`, false},
		{`{"a.0.b": 1}`, `{"a": [{"b": 1}]}`, true},
		{`{"a.0.b": null}`, `{"a": [{"b": 1}]}`, true},
		{`{"a.0": 5}`, `{"a": [{"0": 5}]}`, true},
		{`{"a.b.c": 1}`, `{"a": [{"b": [{"c": 1}]}]}`, true},
		{`{"a.b": 1}`, `{"a": [[{"b": 1}]]}`, false},
		{`{"a.1.b": 1}`, `{"a": [[{"b": 1}], [{"b": 1}]]}`, true},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1}}`, true},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1, "c": 1}}`, false},
		{`{"a": {"b": 1, "c": 2}}`, `{"a": {"c": 2, "b": 1}}`, false},
		{`{"a": {"$ref": "x", "$id": 1}}`, `{"a": {"$ref": "x", "$id": 1}}`, true},
		{`{"a": {}}`, `{"a": {}}`, true},
		{`{"$comment": "hi", "a": 1}`, `{"a": 1}`, true},
		{`{"$alwaysFalse": 1}`, `{"a": 1}`, false},
		{`{"a": {"$date": "2020-01-01T00:00:00Z"}}`, `{"a": {"$date": "2020-01-01T00:00:00Z"}}`, true},
		{`{"a": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}`, `{"a": {"$date": "2019-01-01T00:00:00Z"}}`, true},
		{`{"a": {"$gt": {"$oid": "000000000000000000000001"}}}`, `{"a": {"$oid": "000000000000000000000002"}}`, true},
		{`{"a": {"$gt": false}}`, `{"a": true}`, true},
		{`{"a": {"$gt": {"$timestamp": {"t": 1, "i": 1}}}}`, `{"a": {"$timestamp": {"t": 1, "i": 2}}}`, true},
		{`{"a": {"$lt": {"$binary": {"base64": "AAAA", "subType": "00"}}}}`, `{"a": {"$binary": {"base64": "AA==", "subType": "05"}}}`, true},
		{`{"a": {"$lt": "b"}}`, `{"a": "B"}`, true},
		{`{"a": {"$gt": [1]}}`, `{"a": [[2]]}`, true},
		{`{"a": {"$gt": {}}}`, `{"a": {"x": 1}}`, true},
	}
	for _, c := range cases {
		f, err := match.Compile(raw(t, c.filter))
		if err != nil {
			t.Errorf("Compile(%s): %v", c.filter, err)
			continue
		}
		if got := f.Match(raw(t, c.doc)); got != c.want {
			t.Errorf("Match(%s, %s) = %v, want %v", c.filter, c.doc, got, c.want)
		}
	}
}

func TestMatchPos(t *testing.T) {
	cases := []struct {
		filter, doc string
		pos         int
	}{
		{`{"a": 2}`, `{"a": [1, 2]}`, 1},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, -1},
		{`{"a.b": 3}`, `{"a": [{"b": 1}, {"b": [2, 3]}]}`, 1},
		{`{"a": {"$elemMatch": {"$gt": 1}}}`, `{"a": [0, 5]}`, 1},
		{`{"a": 1, "b": 2}`, `{"a": [0, 1], "b": [2]}`, 0},
		{`{"$or": [{"a": 1}]}`, `{"a": [0, 1]}`, -1},
		{`{"x": 1}`, `{"x": 1}`, -1},
	}
	for _, c := range cases {
		f, err := match.Compile(raw(t, c.filter))
		if err != nil {
			t.Fatal(err)
		}
		ok, pos := f.MatchPos(raw(t, c.doc))
		if !ok || pos != c.pos {
			t.Errorf("MatchPos(%s, %s) = %v, %d, want true, %d", c.filter, c.doc, ok, pos, c.pos)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		filter string
		code   mongoerr.Code
	}{
		{`{"$foo": 1}`, mongoerr.BadValue},
		{`{"a": {"$foo": 1}}`, mongoerr.BadValue},
		{`{"a": {"$in": 1}}`, mongoerr.BadValue},
		{`{"a": {"$nin": 1}}`, mongoerr.BadValue},
		{`{"a": {"$in": [{"$gt": 1}]}}`, mongoerr.BadValue},
		{`{"$and": []}`, mongoerr.BadValue},
		{`{"$or": 1}`, mongoerr.BadValue},
		{`{"$nor": [1]}`, mongoerr.BadValue},
		{`{"a": {"$not": 1}}`, mongoerr.BadValue},
		{`{"a": {"$not": {}}}`, mongoerr.BadValue},
		{`{"a": {"$not": {"b": 1}}}`, mongoerr.BadValue},
		{`{"a": {"$gt": /x/}}`, mongoerr.BadValue},
		{`{"a": {"$ne": /x/}}`, mongoerr.BadValue},
		{`{"a": {"$undefined": true}}`, mongoerr.BadValue},
		{`{"a": {"$size": -1}}`, mongoerr.BadValue},
		{`{"a": {"$size": 1.5}}`, mongoerr.BadValue},
		{`{"a": {"$size": "1"}}`, mongoerr.BadValue},
		{`{"a": {"$type": "foo"}}`, mongoerr.BadValue},
		{`{"a": {"$type": 100}}`, mongoerr.BadValue},
		{`{"a": {"$type": {}}}`, mongoerr.TypeMismatch},
		{`{"a": {"$type": []}}`, mongoerr.FailedToParse},
		{`{"a": {"$mod": [0, 1]}}`, mongoerr.BadValue},
		{`{"a": {"$mod": [1]}}`, mongoerr.BadValue},
		{`{"a": {"$mod": [1, 2, 3]}}`, mongoerr.BadValue},
		{`{"a": {"$mod": 1}}`, mongoerr.BadValue},
		{`{"a": {"$mod": [{"$numberDouble": "NaN"}, 1]}}`, mongoerr.BadValue},
		{`{"a": {"$regex": 1}}`, mongoerr.BadValue},
		{`{"a": {"$options": "i"}}`, mongoerr.BadValue},
		{`{"a": {"$regex": /x/i, "$options": "m"}}`, mongoerr.BadValue},
		{`{"a": {"$regex": "x", "$options": "z"}}`, mongoerr.Code(51108)},
		{`{"a": {"$regex": "(a)\\2"}}`, mongoerr.Code(51091)},
		{`{"a": {"$regex": "a(?=b"}}`, mongoerr.Code(51091)},
		{`{"a": {"$regex": "("}}`, mongoerr.Code(51091)},
		{`{"a": {"$elemMatch": 1}}`, mongoerr.BadValue},
		{`{"a": {"$all": 1}}`, mongoerr.BadValue},
		{`{"a": {"$all": [{"$elemMatch": {}}, 1]}}`, mongoerr.BadValue},
		{`{"a": {"$all": [{"$gt": 1}]}}`, mongoerr.BadValue},
		{`{"a": {"$bitsAllSet": -1}}`, mongoerr.FailedToParse},
		{`{"a": {"$bitsAllSet": 1.5}}`, mongoerr.FailedToParse},
		{`{"a": {"$bitsAllSet": "x"}}`, mongoerr.BadValue},
		{`{"a": {"$bitsAllSet": [-1]}}`, mongoerr.BadValue},
		{`{"$expr": {"$nope": 1}}`, mongoerr.InvalidPipelineOperator},
		{`{"$expr": {"$eq": ["$a", "$$undefinedVar"]}}`, mongoerr.Code(17276)},
		{`{"$where": "true"}`, mongoerr.NotImplemented},
		{`{"$text": {"$search": "x"}}`, mongoerr.NotImplemented},
		{`{"$jsonSchema": 1}`, mongoerr.TypeMismatch},
		{`{"$jsonSchema": {"format": "x"}}`, mongoerr.FailedToParse},
		{`{"a": {"$near": [0, 0]}}`, mongoerr.NotImplemented},
		{`{"a": {"$geoWithin": {}}}`, mongoerr.NotImplemented},
		{`{"a": {"$where": "x"}}`, mongoerr.BadValue},
		{`{"$alwaysTrue": 2}`, mongoerr.FailedToParse},
	}
	for _, c := range cases {
		_, err := match.Compile(raw(t, c.filter))
		if !mongoerr.Is(err, c.code) {
			t.Errorf("Compile(%s) = %v, want code %d", c.filter, err, c.code)
		}
	}
}

func TestCompileArrayFilter(t *testing.T) {
	f, ident, err := match.CompileArrayFilter(raw(t, `{"i.x": {"$gt": 1}, "i.y": 2}`))
	if err != nil || ident != "i" {
		t.Fatalf("got %q, %v", ident, err)
	}
	if !f.MatchValue(ident, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw(t, `{"x": 2, "y": 2}`)}) {
		t.Error("element should match")
	}
	for filter, code := range map[string]mongoerr.Code{
		`{"i.x": 1, "j": 2}`: mongoerr.FailedToParse,
		`{}`:                 mongoerr.FailedToParse,
		`{"I": 1}`:           mongoerr.BadValue,
	} {
		if _, _, err := match.CompileArrayFilter(raw(t, filter)); !mongoerr.Is(err, code) {
			t.Errorf("CompileArrayFilter(%s) = %v, want %d", filter, err, code)
		}
	}
	v, err := match.CompileValue("", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw(t, `{"$gte": 6}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !v.MatchValue("", bson.RawValue{Type: bson.TypeInt32, Value: []byte{7, 0, 0, 0}}) {
		t.Error("7 should match $gte 6")
	}
}
