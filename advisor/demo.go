package advisor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// DemoDatabase is the database Demo builds.
const DemoDatabase = "formwork_demo"

// demoStep builds one collection with a catalogue mistake and runs its
// workload.
type demoStep struct {
	name string
	run  func(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error
}

// demoSteps are the demo's collections, in build order. The hot counter
// goes first: its thousand profiler entries are the oldest, so the
// capped system.profile keeps every later one.
var demoSteps = []demoStep{
	{"pageViews", demoCounter},
	{"orders", demoOrders},
	{"products", demoProducts},
	{"books", demoBooks},
	{"events", demoEvents},
	{"payments", demoPayments},
	{"contacts", demoContacts},
	{"categories", demoCategories},
	{"readings", demoReadings},
	{"listings", demoListings},
	{"carts", demoCarts},
	{"sales", demoSales},
	{"ratings", demoRatings},
	{"wide", demoWide},
	{"reports", demoReports},
	{"attachments", demoAttachments},
}

// Demo builds, in db (meant to be an empty database on a scratch
// deployment such as an in-memory engine), collections with the
// catalogue's mistakes built in, and runs their workload with the
// profiler at level 2, which it leaves off afterwards. It writes, so it
// must never be pointed at a user's database.
func Demo(ctx context.Context, db *mongo.Database) error {
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UTC()
	for _, s := range demoSteps {
		if err := s.run(ctx, db, r, now); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if err := setProfile(ctx, db, 0); err != nil {
			return err
		}
	}
	return nil
}

// setProfile sets db's profiler level. The demo loads its data with the
// profiler off, so that the capped system.profile keeps the workload
// rather than the bulk inserts, and turns it on for the workload.
func setProfile(ctx context.Context, db *mongo.Database, level int) error {
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: level}}).Err(); err != nil {
		return fmt.Errorf("profile %d: %w", level, err)
	}
	return nil
}

// insertAll inserts n documents made by mk.
func insertAll(ctx context.Context, coll *mongo.Collection, n int, mk func(i int) any) error {
	for lo := 0; lo < n; lo += 1000 {
		docs := make([]any, 0, 1000)
		for i := lo; i < min(n, lo+1000); i++ {
			docs = append(docs, mk(i))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			return err
		}
	}
	return nil
}

// repeat runs fn n times.
func repeat(n int, fn func(i int) error) error {
	for i := range n {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// readAll drains the cursor a Find or Aggregate returned.
func readAll(cur *mongo.Cursor, err error) error {
	if err != nil {
		return err
	}
	ctx := context.Background()
	defer cur.Close(ctx)
	for cur.Next(ctx) {
	}
	return cur.Err()
}

// dateDaysAgo returns now less n days.
func dateDaysAgo(now time.Time, n int) bson.DateTime {
	return bson.NewDateTimeFromTime(now.Add(-time.Duration(n) * 24 * time.Hour))
}

// demoCounter: a page view counter incremented one write per view
// (hot-counter).
func demoCounter(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	c := db.Collection("pageViews")
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(1000, func(i int) error {
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("/page/%d", i%5)}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "views", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
}

// demoOrders: orders joined to customers with a hot $lookup followed by a
// $match (lookup-hot, pipeline-stage-order), a copied volatile balance
// (volatile-extended-reference), a blocking sort (blocking-sort), offset
// paging (offset-pagination), a redundant, a hidden and an unused index.
func demoOrders(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	customers, orders := db.Collection("customers"), db.Collection("orders")
	if err := insertAll(ctx, customers, 50, func(i int) any {
		return bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprintf("customer %d", i)}, {Key: "balance", Value: 100 + i}}
	}); err != nil {
		return err
	}
	statuses := []string{"open", "shipped", "delivered"}
	if err := insertAll(ctx, orders, 3000, func(i int) any {
		cu := i % 50
		return bson.D{{Key: "_id", Value: i},
			{Key: "customer", Value: bson.D{{Key: "_id", Value: cu}, {Key: "name", Value: fmt.Sprintf("customer %d", cu)}, {Key: "balance", Value: 100 + cu}}},
			{Key: "status", Value: statuses[i%3]}, {Key: "total", Value: r.IntN(500)},
			{Key: "createdAt", Value: dateDaysAgo(now, r.IntN(900))},
			{Key: "shipTo", Value: bson.D{{Key: "zip", Value: fmt.Sprintf("%05d", r.IntN(99999))}}}}
	}); err != nil {
		return err
	}
	// Balances move every day; the copies in orders do not.
	if _, err := customers.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: 7}}}}); err != nil {
		return err
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "status", Value: 1}}},
		{Keys: bson.D{{Key: "status", Value: 1}, {Key: "createdAt", Value: -1}}},
		{Keys: bson.D{{Key: "shipTo.zip", Value: 1}}},
		{Keys: bson.D{{Key: "total", Value: 1}}, Options: options.Index().SetHidden(true)},
	} {
		if _, err := orders.Indexes().CreateOne(ctx, m); err != nil {
			return err
		}
	}
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(25, func(i int) error {
		if err := readAll(orders.Aggregate(ctx, bson.A{
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "customers"}, {Key: "localField", Value: "customer._id"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "cust"}}}},
			bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: i * 7}}}},
		})); err != nil {
			return err
		}
		if err := readAll(orders.Find(ctx, bson.D{{Key: "total", Value: bson.D{{Key: "$gte", Value: 400}}}},
			options.Find().SetSort(bson.D{{Key: "createdAt", Value: -1}}).SetLimit(10))); err != nil {
			return err
		}
		if i < 3 {
			return readAll(orders.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetSkip(int64(1500+20*i)).SetLimit(20)))
		}
		return nil
	})
}

// demoProducts: reviews embedded without bound (unbounded-array), specs as
// {k, v} with a key every product has (attribute-overuse) and numbers
// stored as strings (attribute-numeric-strings).
func demoProducts(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	return insertAll(ctx, db.Collection("products"), 60, func(i int) any {
		reviews := make(bson.A, 250+i%50)
		for j := range reviews {
			reviews[j] = bson.D{{Key: "stars", Value: 1 + r.IntN(5)}, {Key: "at", Value: dateDaysAgo(now, j)}}
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprintf("product %d", i)}, {Key: "reviews", Value: reviews},
			{Key: "specs", Value: bson.A{
				bson.D{{Key: "k", Value: "color"}, {Key: "v", Value: "blue"}},
				bson.D{{Key: "k", Value: "weightGrams"}, {Key: "v", Value: fmt.Sprint(100 + i)}},
			}}}
	})
}

// demoBooks: buyers lists of a few names, and one bestseller with
// thousands (outlier-skew).
func demoBooks(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	return insertAll(ctx, db.Collection("books"), 100, func(i int) any {
		n := 3 + i%5
		if i == 42 {
			n = 3000
		}
		buyers := make(bson.A, n)
		for j := range buyers {
			buyers[j] = int32(j)
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "title", Value: fmt.Sprintf("book %d", i)}, {Key: "buyers", Value: buyers}}
	})
}

// demoEvents: one small document per event, mostly older than a year, in
// an indexed collection (event-per-document, cold-data-in-hot-index).
func demoEvents(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	events := db.Collection("events")
	if err := insertAll(ctx, events, 12000, func(i int) any {
		return bson.D{{Key: "device", Value: fmt.Sprintf("dev-%d", i%40)}, {Key: "at", Value: dateDaysAgo(now, r.IntN(1200))}, {Key: "temp", Value: 20 + r.Float64()}}
	}); err != nil {
		return err
	}
	_, err := events.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "device", Value: 1}, {Key: "at", Value: 1}}})
	return err
}

// demoPayments: cards, bank accounts and wallets in one collection with no
// validator (mixed-shapes), and a partial index the expiry query never
// uses because it leaves out type (partial-index-unused).
func demoPayments(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	p := db.Collection("payments")
	if err := insertAll(ctx, p, 300, func(i int) any {
		base := bson.D{{Key: "_id", Value: i}, {Key: "customerId", Value: i % 50}}
		switch i % 3 {
		case 0:
			return append(base, bson.E{Key: "type", Value: "card"}, bson.E{Key: "card", Value: bson.D{{Key: "last4", Value: "4242"}, {Key: "expiresAt", Value: dateDaysAgo(now, -r.IntN(900))}}})
		case 1:
			return append(base, bson.E{Key: "type", Value: "bank"}, bson.E{Key: "bank", Value: bson.D{{Key: "iban", Value: "DE00"}}})
		}
		return append(base, bson.E{Key: "type", Value: "wallet"}, bson.E{Key: "wallet", Value: bson.D{{Key: "provider", Value: "paypal"}}})
	}); err != nil {
		return err
	}
	if _, err := p.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "card.expiresAt", Value: 1}},
		Options: options.Index().SetPartialFilterExpression(bson.D{{Key: "type", Value: "card"}})}); err != nil {
		return err
	}
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(5, func(i int) error {
		return readAll(p.Find(ctx, bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: dateDaysAgo(now, -30*i)}}}}))
	})
}

// demoContacts: a migration left half done (schema-versions-live).
func demoContacts(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	return insertAll(ctx, db.Collection("contacts"), 200, func(i int) any {
		if i%3 == 0 {
			return bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "Taylor"}, {Key: "work", Value: "503-555-0110"}}
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 2}, {Key: "name", Value: "Cameron"},
			{Key: "contactInfo", Value: bson.D{{Key: "work", Value: "670-555-7878"}}}}
	})
}

// demoCategories: a tree walked with $graphLookup on an unindexed parent
// (tree-without-index) and searched with an unanchored path regex
// (unanchored-path-regex).
func demoCategories(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	c := db.Collection("categories")
	if err := insertAll(ctx, c, 1200, func(i int) any {
		parent, path := any(nil), ","
		if i > 0 {
			parent = fmt.Sprintf("c%d", (i-1)/4)
			path = fmt.Sprintf(",c%d,", (i-1)/4)
		}
		return bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", i)}, {Key: "parent", Value: parent}, {Key: "path", Value: path}}
	}); err != nil {
		return err
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "path", Value: 1}}}); err != nil {
		return err
	}
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(5, func(i int) error {
		if err := readAll(c.Aggregate(ctx, bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", i)}}}},
			bson.D{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: "categories"}, {Key: "startWith", Value: "$_id"},
				{Key: "connectFromField", Value: "_id"}, {Key: "connectToField", Value: "parent"}, {Key: "as", Value: "descendants"}, {Key: "maxDepth", Value: 2}}}},
		})); err != nil {
			return err
		}
		return readAll(c.Find(ctx, bson.D{{Key: "path", Value: bson.Regex{Pattern: fmt.Sprintf(",c%d,", i)}}}))
	})
}

// demoReadings: measurements bucketed by hand (hand-rolled-buckets).
func demoReadings(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	return insertAll(ctx, db.Collection("readings"), 100, func(i int) any {
		ms := make(bson.A, 50)
		for j := range ms {
			ms[j] = bson.D{{Key: "at", Value: dateDaysAgo(now, i)}, {Key: "temp", Value: 20 + r.Float64()}}
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "sensor", Value: fmt.Sprintf("s%d", i%10)}, {Key: "openedAt", Value: dateDaysAgo(now, i)},
			{Key: "count", Value: 50}, {Key: "measurements", Value: ms}}
	})
}

// demoListings: thirty optional fields, each on a few documents
// (sparse-attributes).
func demoListings(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	return insertAll(ctx, db.Collection("listings"), 300, func(i int) any {
		return bson.D{{Key: "_id", Value: i}, {Key: "title", Value: "item"}, {Key: fmt.Sprintf("attr%02d", i%30), Value: r.IntN(100)}}
	})
}

// demoCarts: large item arrays updated through the positional operator
// (positional-update-large-array).
func demoCarts(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	c := db.Collection("carts")
	if err := insertAll(ctx, c, 40, func(i int) any {
		items := make(bson.A, 150)
		for j := range items {
			items[j] = bson.D{{Key: "sku", Value: fmt.Sprintf("sku%d", j)}, {Key: "qty", Value: 1}}
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "items", Value: items}}
	}); err != nil {
		return err
	}
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(5, func(i int) error {
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "items.sku", Value: "sku140"}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "items.$.qty", Value: 3}}}})
		return err
	})
}

// demoSales: an index with the range field before the sort field
// (esr-violation).
func demoSales(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	s := db.Collection("sales")
	regions := []string{"eu", "us", "apac"}
	if err := insertAll(ctx, s, 2000, func(i int) any {
		return bson.D{{Key: "_id", Value: i}, {Key: "region", Value: regions[i%3]}, {Key: "amount", Value: r.IntN(1000)}, {Key: "day", Value: r.IntN(365)}}
	}); err != nil {
		return err
	}
	if _, err := s.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "region", Value: 1}, {Key: "amount", Value: 1}, {Key: "day", Value: 1}}}); err != nil {
		return err
	}
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(25, func(i int) error {
		return readAll(s.Find(ctx, bson.D{{Key: "region", Value: "eu"}, {Key: "amount", Value: bson.D{{Key: "$gt", Value: 900}}}},
			options.Find().SetSort(bson.D{{Key: "day", Value: 1}})))
	})
}

// demoRatings: the same average recomputed from every review on each
// product page (repeated-group).
func demoRatings(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	c := db.Collection("ratings")
	if err := insertAll(ctx, c, 2000, func(i int) any {
		return bson.D{{Key: "_id", Value: i}, {Key: "productId", Value: i % 60}, {Key: "stars", Value: 1 + r.IntN(5)}}
	}); err != nil {
		return err
	}
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	return repeat(25, func(i int) error {
		return readAll(c.Aggregate(ctx, bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "productId", Value: i % 60}}}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$productId"}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$stars"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		}))
	})
}

// demoWide: an index per attribute, near the limit of 64 (index-limit).
func demoWide(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	c := db.Collection("wide")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		return err
	}
	models := make([]mongo.IndexModel, 52)
	for i := range models {
		models[i] = mongo.IndexModel{Keys: bson.D{{Key: fmt.Sprintf("f%02d", i), Value: 1}}}
	}
	_, err := c.Indexes().CreateMany(ctx, models)
	return err
}

// demoReports: a report sorted in memory past the sort limit, with disk
// use refused (disk-use-sorts). The limit is lowered to 64 KiB on the
// demo's own engine so that a small collection passes it.
func demoReports(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	c := db.Collection("reports")
	if err := insertAll(ctx, c, 500, func(i int) any {
		return bson.D{{Key: "_id", Value: i}, {Key: "score", Value: r.IntN(10000)}, {Key: "body", Value: fmt.Sprintf("%0300d", i)}}
	}); err != nil {
		return err
	}
	admin := db.Client().Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: 64 << 10}}).Err(); err != nil {
		return err
	}
	defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: 100 << 20}})
	if err := setProfile(ctx, db, 2); err != nil {
		return err
	}
	for range 2 {
		err := readAll(c.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "score", Value: -1}}).SetAllowDiskUse(false)))
		if err == nil {
			return fmt.Errorf("the sort did not pass its memory limit")
		}
	}
	return nil
}

// demoAttachments: files stored inline, one of them 2.5 MB
// (large-documents).
func demoAttachments(ctx context.Context, db *mongo.Database, r *rand.Rand, now time.Time) error {
	return insertAll(ctx, db.Collection("attachments"), 3, func(i int) any {
		size := 1000
		if i == 1 {
			size = 2_500_000
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprintf("file%d.pdf", i)},
			{Key: "data", Value: bson.Binary{Data: make([]byte, size)}}}
	})
}
