package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// TestExplainWriteReadsStatementFilter checks that explain of update and
// delete plans the statement's q, whatever its position in the statement.
func TestExplainWriteReadsStatementFilter(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 50)
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "g", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "multi", Value: true}}}}},
		{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "q", Value: bson.D{{Key: "g", Value: 1}}}, {Key: "multi", Value: true}}}}},
		{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "g", Value: 1}}}, {Key: "limit", Value: 0}}}}},
	} {
		res := explaintest.Run(t, db, cmd)
		if !res.Uses("g_1") {
			t.Errorf("%s: plan %s does not use g_1", cmd[0].Key, res)
		}
	}
	if n, _ := c.CountDocuments(ctx, bson.D{{Key: "x", Value: 1}}); n != 0 {
		t.Fatalf("explain wrote %d documents", n)
	}
}
