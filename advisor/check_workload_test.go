package advisor

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// lookupCustomers is the order page's join.
var lookupCustomers = bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "customers"},
	{Key: "localField", Value: "customer._id"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "cust"}}}}

func TestCheckLookupHotFinds(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 0)
	withProfiler(t, db, func() {
		for i := range 20 {
			aggregate(t, db.Collection("orders"), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: i}}}}, lookupCustomers})
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "lookup-hot"), "lookup-hot")
	if f.Namespace != db.Name()+".orders" {
		t.Errorf("namespace %q", f.Namespace)
	}
	wantFigure(t, f, "executions", 20)
	wantFigure(t, f, "documents in orders", 40)
	wantFigure(t, f, "documents in customers", 10)
	wantFigure(t, f, "fan-out: copies to update per change of a customers document", 4)
	wantFix(t, f, `createIndex({"cust._id": 1})`)
}

func TestCheckLookupHotHealthy(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 0)
	withProfiler(t, db, func() {
		// A rare join is fine; a hot read without a join is too.
		for i := range 19 {
			aggregate(t, db.Collection("orders"), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: i}}}}, lookupCustomers})
			find(t, db.Collection("orders"), bson.D{{Key: "_id", Value: i}})
			find(t, db.Collection("orders"), bson.D{{Key: "_id", Value: i + 1}})
		}
	})
	none(t, advise(t, db, Thresholds{}, "lookup-hot"), "lookup-hot")
}

// ratings stores 200 ratings of 10 products.
func ratings(t *testing.T, db *mongo.Database) *mongo.Collection {
	c := db.Collection("ratings")
	insert(t, c, 200, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "productId", Value: i % 10}, {Key: "stars", Value: 1 + i%5}}
	})
	return c
}

func TestCheckRepeatedGroupFinds(t *testing.T) {
	db := newDB(t)
	c := ratings(t, db)
	withProfiler(t, db, func() {
		for i := range 20 {
			aggregate(t, c, bson.A{
				bson.D{{Key: "$match", Value: bson.D{{Key: "productId", Value: i % 10}}}},
				bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$productId"}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$stars"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
			})
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "repeated-group"), "repeated-group")
	wantFigure(t, f, "executions", 20)
	wantFigure(t, f, "documents examined per execution", 200)
	wantFix(t, f, `Parent: "productId", Value: "stars"`)
}

func TestCheckRepeatedGroupHealthy(t *testing.T) {
	db := newDB(t)
	c := ratings(t, db)
	withProfiler(t, db, func() {
		for i := range 20 {
			aggregate(t, c, bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "productId", Value: i % 10}}}}, bson.D{{Key: "$limit", Value: 5}}})
		}
	})
	none(t, advise(t, db, Thresholds{}, "repeated-group"), "repeated-group")
}

func TestCheckHotCounterFinds(t *testing.T) {
	db := newDB(t)
	c := db.Collection("pageViews")
	withProfiler(t, db, func() {
		for i := range 50 {
			_, err := c.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: fmt.Sprintf("/p%d", i%3)}},
				bson.D{{Key: "$inc", Value: bson.D{{Key: "views", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
			must(t, err)
		}
	})
	f := one(t, advise(t, db, Thresholds{HotCounter: 50}, "hot-counter"), "hot-counter")
	wantFigure(t, f, "executions", 50)
	wantFix(t, f, `approx.Config{Field: "views", N: 100`)
}

func TestCheckHotCounterHealthy(t *testing.T) {
	db := newDB(t)
	c := db.Collection("pageViews")
	withProfiler(t, db, func() {
		for i := range 50 {
			_, err := c.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: fmt.Sprintf("/p%d", i%3)}},
				bson.D{{Key: "$inc", Value: bson.D{{Key: "views", Value: 1}}}, {Key: "$set", Value: bson.D{{Key: "last", Value: i}}}}, options.UpdateOne().SetUpsert(true))
			must(t, err)
		}
	})
	none(t, advise(t, db, Thresholds{HotCounter: 50}, "hot-counter"), "hot-counter")
}

// categories stores a tree of 121 nodes with parent references and
// walks it twice with $graphLookup.
func categories(t *testing.T, db *mongo.Database, indexed bool) {
	c := db.Collection("categories")
	insert(t, c, 121, func(i int) bson.D {
		var parent any
		if i > 0 {
			parent = fmt.Sprintf("c%d", (i-1)/3)
		}
		return bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", i)}, {Key: "parent", Value: parent}}
	})
	if indexed {
		index(t, c, bson.D{{Key: "parent", Value: 1}})
	}
	withProfiler(t, db, func() {
		for range 2 {
			aggregate(t, c, bson.A{
				bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: "c0"}}}},
				bson.D{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: "categories"}, {Key: "startWith", Value: "$_id"},
					{Key: "connectFromField", Value: "_id"}, {Key: "connectToField", Value: "parent"}, {Key: "as", Value: "sub"}}}},
			})
		}
	})
}

func TestCheckTreeWithoutIndexFinds(t *testing.T) {
	db := newDB(t)
	categories(t, db, false)
	f := one(t, advise(t, db, Thresholds{}, "tree-without-index"), "tree-without-index")
	if f.Namespace != db.Name()+".categories" || f.Subject != "parent" {
		t.Errorf("finding %+v", f)
	}
	wantFigure(t, f, "executions", 2)
	wantFigure(t, f, "documents in categories", 121)
	wantFix(t, f, `createIndex({parent: 1})`)
}

func TestCheckTreeWithoutIndexHealthy(t *testing.T) {
	db := newDB(t)
	categories(t, db, true)
	none(t, advise(t, db, Thresholds{}, "tree-without-index"), "tree-without-index")
}

// paths stores 1100 materialized paths.
func paths(t *testing.T, db *mongo.Database) *mongo.Collection {
	c := db.Collection("paths")
	insert(t, c, 1100, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "path", Value: fmt.Sprintf(",r,c%d,", i%50)}}
	})
	return c
}

func TestCheckUnanchoredRegexFinds(t *testing.T) {
	db := newDB(t)
	c := paths(t, db)
	withProfiler(t, db, func() {
		for range 2 {
			find(t, c, bson.D{{Key: "path", Value: bson.Regex{Pattern: ",c7,"}}})
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "unanchored-path-regex"), "unanchored-path-regex")
	if f.Subject != "path: /,c7,/" || f.Pattern != "tree" {
		t.Errorf("finding %+v", f)
	}
	wantFigure(t, f, "executions", 2)
	wantFigure(t, f, "documents examined per execution", 1100)
	wantFigure(t, f, "documents returned per execution", 22)
	wantFigure(t, f, "keys and documents examined per document returned", 50)
}

func TestCheckUnanchoredRegexHealthy(t *testing.T) {
	db := newDB(t)
	c := paths(t, db)
	index(t, c, bson.D{{Key: "path", Value: 1}})
	withProfiler(t, db, func() {
		for range 2 {
			find(t, c, bson.D{{Key: "path", Value: bson.Regex{Pattern: "^,r,c7,"}}})
		}
	})
	none(t, advise(t, db, Thresholds{}, "unanchored-path-regex"), "unanchored-path-regex")
}

// carts stores carts of n items and updates one item positionally.
func carts(t *testing.T, db *mongo.Database, n int) {
	c := db.Collection("carts")
	insert(t, c, 10, func(i int) bson.D {
		items := bson.A{}
		for j := range n {
			items = append(items, bson.D{{Key: "sku", Value: fmt.Sprintf("s%d", j)}, {Key: "qty", Value: 1}})
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "items", Value: items}}
	})
	withProfiler(t, db, func() {
		for i := range 3 {
			_, err := c.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: i}, {Key: "items.sku", Value: "s5"}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "items.$.qty", Value: 2}}}})
			must(t, err)
		}
	})
}

func TestCheckPositionalUpdateFinds(t *testing.T) {
	db := newDB(t)
	carts(t, db, 120)
	f := one(t, advise(t, db, Thresholds{}, "positional-update-large-array"), "positional-update-large-array")
	wantFigure(t, f, "executions", 3)
	wantFigure(t, f, "median length of items", 120)
}

func TestCheckPositionalUpdateHealthy(t *testing.T) {
	db := newDB(t)
	carts(t, db, 10)
	none(t, advise(t, db, Thresholds{}, "positional-update-large-array"), "positional-update-large-array")
}

// tasks stores 300 tasks and reads the open ones newest first 20 times.
func tasks(t *testing.T, db *mongo.Database, keys bson.D) {
	c := db.Collection("tasks")
	insert(t, c, 300, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "status", Value: []string{"open", "done"}[i%2]}, {Key: "at", Value: i}, {Key: "size", Value: i % 7}}
	})
	if keys != nil {
		index(t, c, keys)
	}
	withProfiler(t, db, func() {
		for range 20 {
			find(t, c, bson.D{{Key: "status", Value: "open"}, {Key: "size", Value: bson.D{{Key: "$gt", Value: 2}}}},
				options.Find().SetSort(bson.D{{Key: "at", Value: -1}}).SetLimit(10))
		}
	})
}

func TestCheckBlockingSortFinds(t *testing.T) {
	db := newDB(t)
	tasks(t, db, bson.D{{Key: "status", Value: 1}})
	rep := advise(t, db, Thresholds{}, "blocking-sort", "esr-violation")
	f := one(t, rep, "blocking-sort")
	wantFigure(t, f, "executions", 20)
	wantFigure(t, f, "executions with a blocking SORT", 20)
	wantFix(t, f, `db.getCollection("tasks").createIndex({status: 1, at: -1, size: 1})`)
	none(t, rep, "esr-violation")
}

func TestCheckBlockingSortHealthy(t *testing.T) {
	db := newDB(t)
	tasks(t, db, bson.D{{Key: "status", Value: 1}, {Key: "at", Value: -1}, {Key: "size", Value: 1}})
	rep := advise(t, db, Thresholds{}, "blocking-sort", "esr-violation")
	none(t, rep, "blocking-sort")
	none(t, rep, "esr-violation")
}

func TestCheckESRViolationFinds(t *testing.T) {
	db := newDB(t)
	tasks(t, db, bson.D{{Key: "status", Value: 1}, {Key: "size", Value: 1}, {Key: "at", Value: -1}})
	rep := advise(t, db, Thresholds{}, "blocking-sort", "esr-violation")
	f := one(t, rep, "esr-violation")
	if f.Subject != "status_1_size_1_at_-1" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "executions with a blocking SORT", 20)
	wantFix(t, f, `createIndex({status: 1, at: -1, size: 1})`)
	wantFix(t, f, `hideIndex("status_1_size_1_at_-1")`)
	none(t, rep, "blocking-sort")
}

func TestCheckESRViolationHealthy(t *testing.T) {
	db := newDB(t)
	tasks(t, db, bson.D{{Key: "status", Value: 1}, {Key: "at", Value: -1}, {Key: "size", Value: 1}})
	none(t, advise(t, db, Thresholds{}, "esr-violation"), "esr-violation")
}

func TestCheckOffsetPaginationFinds(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	withProfiler(t, db, func() {
		for i := range 3 {
			find(t, c, bson.D{}, options.Find().SetSort(bson.D{{Key: "b", Value: 1}}).SetSkip(int64(1000+500*i)).SetLimit(20))
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "offset-pagination"), "offset-pagination")
	if f.Severity != Info {
		t.Errorf("severity %v for 3 executions", f.Severity)
	}
	wantFigure(t, f, "executions", 3)
	wantFigure(t, f, "largest skip", 2000)
}

func TestCheckOffsetPaginationHealthy(t *testing.T) {
	db := newDB(t)
	c := db.Collection("items")
	abDocs(t, c)
	withProfiler(t, db, func() {
		for i := range 3 {
			find(t, c, bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 10 * i}}}}, options.Find().SetSort(bson.D{{Key: "b", Value: 1}}).SetSkip(20).SetLimit(20))
		}
	})
	none(t, advise(t, db, Thresholds{}, "offset-pagination"), "offset-pagination")
}

func TestCheckPipelineStageOrderFinds(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 0)
	withProfiler(t, db, func() {
		aggregate(t, db.Collection("orders"), bson.A{lookupCustomers, bson.D{{Key: "$match", Value: bson.D{{Key: "customer.name", Value: "c1"}}}}})
	})
	f := one(t, advise(t, db, Thresholds{}, "pipeline-stage-order"), "pipeline-stage-order")
	wantFigure(t, f, "stage position", 2)
	wantFigure(t, f, "executions", 1)
	wantFix(t, f, `aggregate([{"$match":{"customer.name":"?string"}}`)
}

func TestCheckPipelineStageOrderHealthy(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 0)
	withProfiler(t, db, func() {
		// $match first; and a $match on what the $lookup produced.
		aggregate(t, db.Collection("orders"), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "customer.name", Value: "c1"}}}}, lookupCustomers})
		aggregate(t, db.Collection("orders"), bson.A{lookupCustomers, bson.D{{Key: "$match", Value: bson.D{{Key: "cust.balance", Value: bson.D{{Key: "$gt", Value: 5}}}}}}})
	})
	none(t, advise(t, db, Thresholds{}, "pipeline-stage-order"), "pipeline-stage-order")
}

// setSortLimit sets the blocking sort memory limit and restores 100 MB
// when the test ends.
func setSortLimit(t *testing.T, db *mongo.Database, bytes int) {
	admin := db.Client().Database("admin")
	set := func(n int) error {
		return admin.RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: n}}).Err()
	}
	must(t, set(bytes))
	t.Cleanup(func() { set(100 << 20) })
}

// reports stores 300 documents of 300 bytes and sorts them twice by
// score without disk use.
func reports(t *testing.T, db *mongo.Database, indexed bool) {
	c := db.Collection("reports")
	insert(t, c, 300, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "score", Value: (i * 37) % 300}, {Key: "body", Value: fmt.Sprintf("%0300d", i)}}
	})
	if indexed {
		index(t, c, bson.D{{Key: "score", Value: -1}})
	}
	setSortLimit(t, db, 32<<10)
	withProfiler(t, db, func() {
		for range 2 {
			cur, err := c.Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "score", Value: -1}}).SetAllowDiskUse(false))
			if err == nil {
				var out []bson.Raw
				err = cur.All(context.Background(), &out)
			}
			if indexed != (err == nil) {
				t.Fatalf("indexed %v: sort error %v", indexed, err)
			}
		}
	})
}

func TestCheckDiskUseSortsFinds(t *testing.T) {
	db := newDB(t)
	reports(t, db, false)
	f := one(t, advise(t, db, Thresholds{}, "disk-use-sorts"), "disk-use-sorts")
	if f.Severity != Error {
		t.Errorf("severity %v", f.Severity)
	}
	wantFigure(t, f, "executions", 2)
	wantFigure(t, f, "executions that failed with 292", 2)
	wantFix(t, f, `createIndex({score: -1})`)
}

func TestCheckDiskUseSortsHealthy(t *testing.T) {
	db := newDB(t)
	reports(t, db, true)
	none(t, advise(t, db, Thresholds{}, "disk-use-sorts"), "disk-use-sorts")
}

// TestCheckBlockingSortAggregate finds the blocking sort of an
// aggregation opening with $match and $sort, and its ESR index.
func TestCheckBlockingSortAggregate(t *testing.T) {
	db := newDB(t)
	c := db.Collection("tasks")
	insert(t, c, 100, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "status", Value: []string{"open", "done"}[i%2]}, {Key: "at", Value: i}}
	})
	withProfiler(t, db, func() {
		for range 20 {
			aggregate(t, c, bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "status", Value: "open"}}}},
				bson.D{{Key: "$sort", Value: bson.D{{Key: "at", Value: 1}}}}, bson.D{{Key: "$limit", Value: 5}}})
		}
	})
	f := one(t, advise(t, db, Thresholds{}, "blocking-sort"), "blocking-sort")
	wantFigure(t, f, "executions", 20)
	wantFix(t, f, `createIndex({status: 1, at: 1})`)
}

// TestCheckESRViolationSortFirst: an index with the sort field before the
// equality field, no range at all.
func TestCheckESRViolationSortFirst(t *testing.T) {
	db := newDB(t)
	c := db.Collection("tasks")
	insert(t, c, 300, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "status", Value: []string{"open", "done", "late"}[i%3]}, {Key: "at", Value: i}}
	})
	index(t, c, bson.D{{Key: "at", Value: 1}, {Key: "status", Value: 1}})
	withProfiler(t, db, func() {
		for range 20 {
			find(t, c, bson.D{{Key: "status", Value: "late"}}, options.Find().SetSort(bson.D{{Key: "at", Value: 1}}).SetHint("at_1_status_1"))
		}
	})
	rep := advise(t, db, Thresholds{}, "esr-violation", "blocking-sort")
	f := one(t, rep, "esr-violation")
	wantFigure(t, f, "keys examined per document returned", 3)
	wantFix(t, f, `createIndex({status: 1, at: 1})`)
	none(t, rep, "blocking-sort")
}

func TestLaterVersion(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"10", "9", true}, {"9", "10", false}, {`"v2"`, `"v1"`, true}, {"2", "2", false}} {
		if got := laterVersion(c.a, c.b); got != c.want {
			t.Errorf("laterVersion(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
