package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCreateAutoIndexID checks that create accepts mongod 7.0's deprecated
// autoIndexId: true (the collection gets its _id index as always) and
// refuses false, which Formwork does not implement (NotImplemented).
func TestCreateAutoIndexID(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "auto"}, {Key: "autoIndexId", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	specs, err := db.Collection("auto").Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 1 || specs[0].Name != "_id_" {
		t.Fatalf("indexes %v, %v; want the _id index", specs, err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "create", Value: "noid"}, {Key: "autoIndexId", Value: false}}).Err()
	wantCode(t, err, 238, "NotImplemented")
}
