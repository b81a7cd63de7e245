package advisor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestCheckLargeDocumentsFinds(t *testing.T) {
	db := newDB(t)
	big := bson.D{{Key: "_id", Value: 1}, {Key: "data", Value: bson.Binary{Data: make([]byte, 2_100_000)}}}
	raw, _ := bson.Marshal(big)
	insert(t, db.Collection("files"), 3, func(i int) bson.D {
		if i == 1 {
			return big
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "data", Value: bson.Binary{Data: make([]byte, 100)}}}
	})
	f := one(t, advise(t, db, Thresholds{}, "large-documents"), "large-documents")
	if f.Severity != Warning || f.Namespace != db.Name()+".files" {
		t.Errorf("finding %+v", f)
	}
	wantFigure(t, f, "max document size", float64(len(raw)))
}

func TestCheckLargeDocumentsHealthy(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("files"), 20, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "data", Value: bson.Binary{Data: make([]byte, 100_000)}}}
	})
	none(t, advise(t, db, Thresholds{}, "large-documents"), "large-documents")
}

// manyIndexes creates n single-field indexes on coll.
func manyIndexes(t *testing.T, coll *mongo.Collection, n int) {
	t.Helper()
	models := make([]mongo.IndexModel, n)
	for i := range models {
		models[i] = mongo.IndexModel{Keys: bson.D{{Key: fmt.Sprintf("f%02d", i), Value: 1}}}
	}
	_, err := coll.Indexes().CreateMany(context.Background(), models)
	must(t, err)
}

func TestCheckIndexLimitFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("wide"), 1, func(i int) bson.D { return bson.D{{Key: "_id", Value: i}} })
	manyIndexes(t, db.Collection("wide"), 49)
	f := one(t, advise(t, db, Thresholds{}, "index-limit"), "index-limit")
	wantFigure(t, f, "indexes", 50)
	wantFigure(t, f, "limit", 64)
	wantFigure(t, f, "indexes with no access", 49)
}

func TestCheckIndexLimitHealthy(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("wide"), 1, func(i int) bson.D { return bson.D{{Key: "_id", Value: i}} })
	manyIndexes(t, db.Collection("wide"), 10)
	none(t, advise(t, db, Thresholds{}, "index-limit"), "index-limit")
}

func TestCheckSparseAttributesFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("listings"), 100, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "title", Value: "x"}, {Key: fmt.Sprintf("attr%02d", i%20), Value: i}}
	})
	f := one(t, advise(t, db, Thresholds{}, "sparse-attributes"), "sparse-attributes")
	wantFigure(t, f, "sampled documents", 100)
	wantFigure(t, f, "top-level fields", 21)
	wantFigure(t, f, "sparse fields", 20)
	wantFix(t, f, `createIndex({"attrs.k": 1, "attrs.v": 1})`)
}

func TestCheckSparseAttributesHealthy(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("listings"), 100, func(i int) bson.D {
		d := bson.D{{Key: "_id", Value: i}}
		for j := range 12 {
			d = append(d, bson.E{Key: fmt.Sprintf("f%02d", j), Value: j})
		}
		return d
	})
	none(t, advise(t, db, Thresholds{}, "sparse-attributes"), "sparse-attributes")
}

// specs builds a {k, v} array.
func specs(kv ...any) bson.A {
	out := bson.A{}
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, bson.D{{Key: "k", Value: kv[i]}, {Key: "v", Value: kv[i+1]}})
	}
	return out
}

func TestCheckAttributeOveruseFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("products"), 20, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "specs", Value: specs("color", "blue", fmt.Sprintf("size%d", i%5), i)}}
	})
	f := one(t, advise(t, db, Thresholds{}, "attribute-overuse"), "attribute-overuse")
	if f.Subject != "specs.color" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "documents with the key", 20)
	wantFigure(t, f, "share", 1)
}

func TestCheckAttributeOveruseHealthy(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("products"), 20, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "specs", Value: specs(fmt.Sprintf("k%d", i%2), "x")}}
	})
	none(t, advise(t, db, Thresholds{}, "attribute-overuse"), "attribute-overuse")
}

func TestCheckAttributeNumericStringsFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("products"), 20, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "specs", Value: specs("weight", fmt.Sprint(100+i), "color", "red")}}
	})
	f := one(t, advise(t, db, Thresholds{}, "attribute-numeric-strings"), "attribute-numeric-strings")
	if f.Subject != "specs.weight" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "values", 20)
	wantFigure(t, f, "string values", 20)
	wantFigure(t, f, "numeric strings", 20)
	wantFix(t, f, "NumericStrings: attribute.Normalize")
}

func TestCheckAttributeNumericStringsHealthy(t *testing.T) {
	db := newDB(t)
	// Numbers stored as numbers, and strings that are not numbers.
	insert(t, db.Collection("products"), 20, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "specs", Value: specs("weight", 100+i, "sku", fmt.Sprintf("A%d", i), "color", "red")}}
	})
	none(t, advise(t, db, Thresholds{}, "attribute-numeric-strings"), "attribute-numeric-strings")
}

// payment returns a payment method document of kind i%3.
func payment(i int) bson.D {
	base := bson.D{{Key: "_id", Value: i}, {Key: "customerId", Value: i % 7}}
	switch i % 3 {
	case 0:
		return append(base, bson.E{Key: "type", Value: "card"}, bson.E{Key: "card", Value: bson.D{{Key: "last4", Value: "4242"}}})
	case 1:
		return append(base, bson.E{Key: "type", Value: "bank"}, bson.E{Key: "bank", Value: bson.D{{Key: "iban", Value: "DE00"}}})
	}
	return append(base, bson.E{Key: "type", Value: "wallet"}, bson.E{Key: "wallet", Value: bson.D{{Key: "provider", Value: "paypal"}}})
}

func TestCheckMixedShapesFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("payments"), 90, payment)
	f := one(t, advise(t, db, Thresholds{}, "mixed-shapes"), "mixed-shapes")
	if f.Subject != "type" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "discriminator values", 3)
	wantFigure(t, f, "kind-specific fields", 3)
	wantFix(t, f, `oneOf: [{properties: {type: {enum: ["bank"]}}, required: ["bank"]}`)
}

func TestCheckMixedShapesHealthy(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	// The same shapes under a $jsonSchema validator.
	must(t, db.CreateCollection(ctx, "payments", options.CreateCollection().SetValidator(bson.D{{Key: "$jsonSchema", Value: bson.D{
		{Key: "bsonType", Value: "object"}, {Key: "required", Value: bson.A{"type"}}}}})))
	insert(t, db.Collection("payments"), 90, payment)
	// A status field with several values over one shape, and a
	// lifecycle whose later states keep the fields of earlier ones.
	insert(t, db.Collection("orders"), 90, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "status", Value: []string{"open", "shipped"}[i%2]}, {Key: "total", Value: i}}
	})
	insert(t, db.Collection("parcels"), 90, func(i int) bson.D {
		d := bson.D{{Key: "_id", Value: i}, {Key: "state", Value: []string{"open", "shipped", "delivered"}[i%3]}}
		if i%3 >= 1 {
			d = append(d, bson.E{Key: "shippedAt", Value: i})
		}
		if i%3 == 2 {
			d = append(d, bson.E{Key: "deliveredAt", Value: i})
		}
		return d
	})
	none(t, advise(t, db, Thresholds{}, "mixed-shapes"), "mixed-shapes")
}

func TestCheckSchemaVersionsLiveFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("contacts"), 30, func(i int) bson.D {
		if i%3 == 0 {
			return bson.D{{Key: "_id", Value: i}, {Key: "work", Value: "1"}}
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 2}, {Key: "contactInfo", Value: bson.D{{Key: "work", Value: "1"}}}}
	})
	rep := advise(t, db, Thresholds{}, "schema-versions-live", "mixed-shapes")
	f := one(t, rep, "schema-versions-live")
	wantFigure(t, f, "documents without schemaVersion", 10)
	wantFigure(t, f, "documents at schemaVersion 2", 20)
	wantFigure(t, f, "share not at the latest version", 0.33)
	wantFix(t, f, "updateMany({schemaVersion: {$ne: 2}}")
	none(t, rep, "mixed-shapes")
}

func TestCheckSchemaVersionsLiveHealthy(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("contacts"), 30, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 2}, {Key: "contactInfo", Value: bson.D{{Key: "work", Value: "1"}}}}
	})
	none(t, advise(t, db, Thresholds{}, "schema-versions-live"), "schema-versions-live")
}

// reading is one small dated measurement.
func reading(i int, at time.Time) bson.D {
	return bson.D{{Key: "sensor", Value: fmt.Sprintf("s%d", i%4)}, {Key: "at", Value: bson.NewDateTimeFromTime(at)}, {Key: "temp", Value: float64(i)}}
}

func TestCheckEventPerDocumentFinds(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	insert(t, db.Collection("readings"), 600, func(i int) bson.D { return reading(i, now.Add(-time.Duration(i)*time.Minute)) })
	f := one(t, advise(t, db, Thresholds{EventDocs: 500}, "event-per-document"), "event-per-document")
	if f.Subject != "at" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "documents", 600)
	wantFigure(t, f, "documents with a date in at", 1)
	wantFix(t, f, `timeseries: {timeField: "at", metaField: "sensor"`)
}

func TestCheckEventPerDocumentHealthy(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	must(t, db.CreateCollection(ctx, "readings", options.CreateCollection().SetTimeSeriesOptions(
		options.TimeSeries().SetTimeField("at").SetMetaField("sensor"))))
	now := time.Now()
	insert(t, db.Collection("readings"), 600, func(i int) bson.D { return reading(i, now.Add(-time.Duration(i)*time.Minute)) })
	none(t, advise(t, db, Thresholds{EventDocs: 500}, "event-per-document"), "event-per-document")
}

// bucketDoc is a hand-rolled bucket of 50 measurements.
func bucketDoc(i int, at time.Time) bson.D {
	ms := make(bson.A, 50)
	for j := range ms {
		ms[j] = bson.D{{Key: "at", Value: bson.NewDateTimeFromTime(at.Add(time.Duration(j) * time.Second))}, {Key: "temp", Value: float64(j)}}
	}
	return bson.D{{Key: "_id", Value: i}, {Key: "sensor", Value: fmt.Sprintf("s%d", i%4)}, {Key: "openedAt", Value: bson.NewDateTimeFromTime(at)},
		{Key: "count", Value: 50}, {Key: "measurements", Value: ms}}
}

func TestCheckHandRolledBucketsFinds(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	insert(t, db.Collection("buckets"), 40, func(i int) bson.D { return bucketDoc(i, now.Add(-time.Duration(i)*time.Hour)) })
	f := one(t, advise(t, db, Thresholds{}, "hand-rolled-buckets"), "hand-rolled-buckets")
	if f.Subject != "measurements" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "documents", 40)
	wantFigure(t, f, "median measurements per bucket", 50)
	wantFix(t, f, `timeseries: {timeField: "at", metaField: "sensor"`)
}

func TestCheckHandRolledBucketsHealthy(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	must(t, db.CreateCollection(ctx, "readings", options.CreateCollection().SetTimeSeriesOptions(
		options.TimeSeries().SetTimeField("at").SetMetaField("sensor"))))
	now := time.Now()
	insert(t, db.Collection("readings"), 200, func(i int) bson.D { return reading(i, now.Add(-time.Duration(i)*time.Minute)) })
	// A subset window of dated reviews is no bucket: no count next to it.
	insert(t, db.Collection("products"), 20, func(i int) bson.D {
		rs := bson.A{}
		for j := range 5 {
			rs = append(rs, bson.D{{Key: "at", Value: bson.NewDateTimeFromTime(now)}, {Key: "stars", Value: j}})
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "createdAt", Value: bson.NewDateTimeFromTime(now)}, {Key: "recentReviews", Value: rs}}
	})
	none(t, advise(t, db, Thresholds{}, "hand-rolled-buckets"), "hand-rolled-buckets")
}

func TestCheckColdDataFinds(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	insert(t, db.Collection("orders"), 200, func(i int) bson.D {
		age := 10 * 24 * time.Hour
		if i%4 != 0 {
			age = 800 * 24 * time.Hour
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "customer", Value: i % 9}, {Key: "createdAt", Value: bson.NewDateTimeFromTime(now.Add(-age))}}
	})
	_, err := db.Collection("orders").Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "customer", Value: 1}}})
	must(t, err)
	f := one(t, advise(t, db, Thresholds{ColdDocs: 100}, "cold-data-in-hot-index"), "cold-data-in-hot-index")
	if f.Subject != "createdAt" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "sampled documents older than the cutoff", 150)
	wantFigure(t, f, "cold share", 0.75)
	wantFigure(t, f, "indexes", 2)
	wantFix(t, f, `{$merge: {into: {db: "archive", coll: "orders"}`)
}

func TestCheckColdDataHealthy(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	insert(t, db.Collection("orders"), 200, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "customer", Value: i % 9}, {Key: "createdAt", Value: bson.NewDateTimeFromTime(now.Add(-time.Duration(i) * time.Hour))}}
	})
	_, err := db.Collection("orders").Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "customer", Value: 1}}})
	must(t, err)
	none(t, advise(t, db, Thresholds{ColdDocs: 100}, "cold-data-in-hot-index"), "cold-data-in-hot-index")
}

// customersAndOrders stores 10 customers and 40 orders copying each
// customer's name and balance; stale orders have an outdated balance.
func customersAndOrders(t *testing.T, db *mongo.Database, stale int) {
	insert(t, db.Collection("customers"), 10, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprintf("c%d", i)}, {Key: "balance", Value: 100 + i}}
	})
	insert(t, db.Collection("orders"), 40, func(i int) bson.D {
		balance := 100 + i%10
		if i < stale {
			balance = 1
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "customer", Value: bson.D{{Key: "_id", Value: i % 10}, {Key: "name", Value: fmt.Sprintf("c%d", i%10)}, {Key: "balance", Value: balance}}}}
	})
}

func TestCheckVolatileReferenceFinds(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 10)
	f := one(t, advise(t, db, Thresholds{}, "volatile-extended-reference"), "volatile-extended-reference")
	if f.Namespace != db.Name()+".orders" || f.Subject != "customer" {
		t.Errorf("finding %+v", f)
	}
	wantFigure(t, f, "sampled copies joined to their source", 40)
	wantFigure(t, f, "copies with a stale balance", 10)
	wantFigure(t, f, "stale share of balance", 0.25)
	wantFix(t, f, `Field: "customer", Fields: []string{"name"}, Volatile: []string{"balance"}`)
}

func TestCheckVolatileReferenceHealthy(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 0)
	none(t, advise(t, db, Thresholds{}, "volatile-extended-reference"), "volatile-extended-reference")
}

// TestCheckEventPerDocumentEntities sees no events in small dated
// documents that the workload updates: they are entities.
func TestCheckEventPerDocumentEntities(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	c := db.Collection("accounts")
	insert(t, c, 600, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "openedAt", Value: bson.NewDateTimeFromTime(now)}, {Key: "balance", Value: i}}
	})
	withProfiler(t, db, func() {
		_, err := c.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: 5}}}})
		must(t, err)
	})
	none(t, advise(t, db, Thresholds{EventDocs: 500}, "event-per-document"), "event-per-document")
}
