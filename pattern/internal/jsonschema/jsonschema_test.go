package jsonschema

import (
	"context"
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

type inner struct {
	Brand string    `bson:"brand"`
	Exp   time.Time `bson:"expiresAt"`
}

type sample struct {
	ID     bson.ObjectID  `bson:"_id,omitempty"`
	Kind   string         `bson:"kind"`
	N      int            `bson:"n"`
	Small  int32          `bson:"small"`
	F      float64        `bson:"f"`
	Tags   []string       `bson:"tags"`
	Card   inner          `bson:"card"`
	Ptr    *inner         `bson:"ptr"`
	Any    any            `bson:"any"`
	M      map[string]int `bson:"m"`
	Opt    string         `bson:"opt,omitempty"`
	Hidden string         `bson:"-"`
	Base   `bson:",inline"`
}

type Base struct {
	Created time.Time `bson:"createdAt"`
}

// TestObjectAcceptsWhatTheDriverWrites checks that the schema derived from
// a struct accepts the struct's own encodings (zero values, nils, large
// ints) and rejects a document missing a required field or with a wrong
// type, through a real $jsonSchema validator.
func TestObjectAcceptsWhatTheDriverWrites(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	s, err := Object(reflect.TypeFor[sample](), "kind")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "c", options.CreateCollection().SetValidator(bson.D{{Key: "$jsonSchema", Value: s}})); err != nil {
		t.Fatal(err)
	}
	c := db.Collection("c")
	for _, v := range []sample{{}, {N: 1 << 40, Tags: []string{"a"}, Ptr: &inner{}, Any: 3, M: map[string]int{"a": 1}, Opt: "x"}} {
		if _, err := c.InsertOne(ctx, v); err != nil {
			t.Errorf("insert %+v: %v", v, err)
		}
	}
	for _, bad := range []bson.D{
		{{Key: "n", Value: 1}},
		{{Key: "n", Value: "one"}, {Key: "small", Value: int32(1)}, {Key: "f", Value: 1.0}, {Key: "tags", Value: nil}, {Key: "card", Value: bson.D{{Key: "brand", Value: "v"}, {Key: "expiresAt", Value: time.Now()}}}, {Key: "createdAt", Value: time.Now()}},
	} {
		if _, err := c.InsertOne(ctx, bad); err == nil {
			t.Errorf("insert %v: accepted", bad)
		}
	}
	if _, err := Object(reflect.TypeFor[int]()); err == nil {
		t.Error("Object(int) did not fail")
	}
	if got := Fields(reflect.TypeFor[sample]()); len(got) != 12 || got[11] != "createdAt" {
		t.Errorf("Fields %v", got)
	}
}
