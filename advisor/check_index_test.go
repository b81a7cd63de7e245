package advisor

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// index creates one index.
func index(t *testing.T, coll *mongo.Collection, keys bson.D, opts ...*options.IndexOptionsBuilder) {
	t.Helper()
	m := mongo.IndexModel{Keys: keys}
	if len(opts) > 0 {
		m.Options = opts[0]
	}
	_, err := coll.Indexes().CreateOne(context.Background(), m)
	must(t, err)
}

// abDocs stores 50 documents {a, b}.
func abDocs(t *testing.T, coll *mongo.Collection) {
	insert(t, coll, 50, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 5}, {Key: "b", Value: i}}
	})
}

func TestCheckUnusedIndexFinds(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	index(t, c, bson.D{{Key: "a", Value: 1}})
	withProfiler(t, db, func() {
		for i := range 3 {
			find(t, c, bson.D{{Key: "b", Value: i}})
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "unused-index"), "unused-index")
	if f.Subject != "a_1" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "accesses.ops", 0)
	wantFigure(t, f, "workload operations on the collection", 3)
	wantFix(t, f, `hideIndex("a_1")`)
}

func TestCheckUnusedIndexHealthy(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	index(t, c, bson.D{{Key: "a", Value: 1}})
	index(t, c, bson.D{{Key: "b", Value: 1}}, options.Index().SetUnique(true))
	withProfiler(t, db, func() {
		for i := range 3 {
			find(t, c, bson.D{{Key: "a", Value: i}})
		}
	})
	none(t, advise(t, db, Thresholds{}, "unused-index"), "unused-index")
}

func TestCheckRedundantIndexFinds(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	index(t, c, bson.D{{Key: "a", Value: 1}})
	index(t, c, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}})
	f := one(t, advise(t, db, Thresholds{}, "redundant-index"), "redundant-index")
	if f.Subject != "a_1" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "keys in the redundant index", 1)
	wantFigure(t, f, "keys in the covering index", 2)
	wantFix(t, f, `dropIndex("a_1")`)
}

func TestCheckRedundantIndexHealthy(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	index(t, c, bson.D{{Key: "a", Value: 1}})
	index(t, c, bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}})
	index(t, c, bson.D{{Key: "a", Value: -1}, {Key: "b", Value: 1}})
	index(t, c, bson.D{{Key: "b", Value: 1}}, options.Index().SetUnique(true))
	none(t, advise(t, db, Thresholds{}, "redundant-index"), "redundant-index")
}

func TestCheckHiddenIndexFinds(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	index(t, c, bson.D{{Key: "a", Value: 1}}, options.Index().SetHidden(true))
	f := one(t, advise(t, db, Thresholds{}, "hidden-index"), "hidden-index")
	if f.Subject != "a_1" || f.Severity != Info {
		t.Errorf("finding %+v", f)
	}
	wantFigure(t, f, "documents", 50)
	wantFix(t, f, `unhideIndex("a_1")`)
}

func TestCheckHiddenIndexHealthy(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	index(t, c, bson.D{{Key: "a", Value: 1}})
	none(t, advise(t, db, Thresholds{}, "hidden-index"), "hidden-index")
}

// paymentsWithPartial stores payments and the partial index on
// card.last4 for cards.
func paymentsWithPartial(t *testing.T, db *mongo.Database) *mongo.Collection {
	c := db.Collection("payments")
	insert(t, c, 90, payment)
	index(t, c, bson.D{{Key: "card.last4", Value: 1}}, options.Index().SetPartialFilterExpression(bson.D{{Key: "type", Value: "card"}}))
	return c
}

func TestCheckPartialIndexUnusedFinds(t *testing.T) {
	db := newDB(t)
	c := paymentsWithPartial(t, db)
	withProfiler(t, db, func() {
		for range 4 {
			find(t, c, bson.D{{Key: "card.last4", Value: "4242"}})
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "partial-index-unused"), "partial-index-unused")
	if f.Subject != "card.last4_1" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "accesses.ops", 0)
	wantFigure(t, f, "shapes without the partial filter", 1)
	wantFigure(t, f, "their executions", 4)
}

func TestCheckPartialIndexUnusedHealthy(t *testing.T) {
	db := newDB(t)
	c := paymentsWithPartial(t, db)
	withProfiler(t, db, func() {
		for range 4 {
			find(t, c, bson.D{{Key: "type", Value: "card"}, {Key: "card.last4", Value: "4242"}})
		}
	})
	none(t, advise(t, db, Thresholds{}, "partial-index-unused"), "partial-index-unused")
}
