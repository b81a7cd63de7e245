package update

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func mustJSONDoc(s string) []byte {
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		panic(err)
	}
	return d
}

// FuzzApply applies arbitrary update documents to arbitrary documents: the
// result is a valid document or a *mongoerr.Error, never a panic.
func FuzzApply(f *testing.F) {
	seeds := [][3]string{
		{`{"_id": 1, "a": [1, 2]}`, `{"$push": {"a": {"$each": [3], "$slice": -2}}}`, `{}`},
		{`{"_id": 1, "a": 1}`, `{"$inc": {"a": {"$numberLong": "9223372036854775807"}}}`, `{}`},
		{`{"_id": 1, "a": [{"x": 1}]}`, `{"$set": {"a.$[i].x": 2}}`, `{"i.x": 1}`},
		{`{"_id": 1, "b": {"c": 1}}`, `{"$rename": {"b.c": "d"}}`, `{}`},
		{`{"_id": 1}`, `{"x": 1}`, `{}`},
		{`{"_id": 1, "a": [1, 2, 3]}`, `{"$pull": {"a": {"$gt": 1}}, "$bit": {"n": {"or": 1}}}`, `{}`},
		{`{"_id": 1, "a": [1, 2, 3]}`, `{"$set": {"a.$": 5, "a.5.b": 1}, "$unset": {"c": 1}}`, `{}`},
	}
	for _, s := range seeds {
		f.Add(mustJSONDoc(s[0]), mustJSONDoc(s[1]), mustJSONDoc(s[2]), 0)
	}
	f.Fuzz(func(t *testing.T, doc, upd, af []byte, pos int) {
		// Apply's contract requires valid BSON; Compile checks its input.
		if validDeep(doc, 0) != nil {
			return
		}
		var filters []bson.Raw
		if len(af) > 5 {
			filters = []bson.Raw{af}
		}
		u, err := Compile(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: upd}, filters)
		if err != nil {
			checkErr(t, err)
			return
		}
		if pos < -1 || pos > 1000 {
			pos = -1
		}
		out, _, err := u.Apply(doc, pos, time.Unix(0, 0))
		if err != nil {
			checkErr(t, err)
		} else if err := out.Validate(); err != nil {
			t.Fatalf("invalid output: %v", err)
		}
		up, err := u.Upsert(doc, time.Unix(0, 0))
		if err != nil {
			checkErr(t, err)
		} else if err := up.Validate(); err != nil {
			t.Fatalf("invalid upsert: %v", err)
		}
	})
}

func checkErr(t *testing.T, err error) {
	var me *mongoerr.Error
	if !errors.As(err, &me) {
		t.Fatalf("not a mongoerr.Error: %T %v", err, err)
	}
	if me.Code == mongoerr.InternalError {
		t.Fatalf("internal error: %v", err)
	}
}
