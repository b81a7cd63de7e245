package lab

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/extref"
)

// extrefScenario: orders with their customer. The order page shows the
// order with its customer's name. Naive: the order holds customerId and
// the page reads the customer too. Extended reference: the order embeds
// {_id, name} of its customer, so the page is one document; creating an
// order reads the customer first, and renaming a customer fans out to
// every live order (delivered and cancelled orders are frozen snapshots).
var extrefScenario = scenario{
	pattern: "extref",
	title:   "orders with their customer: the order page shows the customer's name",
	steps:   6,
	run:     runExtref,
}

// runExtref generates the scenario's data, loads it in both forms and
// measures them.
func runExtref(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	customers, orders := e.n(200, 4), e.n(3000, 40)
	statuses := []string{"open", "paid", "shipped", "delivered", "delivered", "delivered", "cancelled"}
	var customerDocs []any
	for c := range customers {
		customerDocs = append(customerDocs, bson.D{{Key: "_id", Value: c}, {Key: "name", Value: g.name()},
			{Key: "email", Value: g.words(1) + "@example.com"}, {Key: "tier", Value: g.pick([]string{"gold", "silver", "basic"})},
			{Key: "addresses", Value: bson.A{bson.D{{Key: "street", Value: g.words(2)}, {Key: "city", Value: g.words(1)}}}}})
	}
	// Customers order with Zipf skew: a few order a lot.
	buyer := g.zipf(customers, 1.2)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type order struct {
		customer int
		doc      bson.D
	}
	mkOrder := func(i int) order {
		items := bson.A{}
		for range g.heavy(1, 1.5, 30) {
			items = append(items, bson.D{{Key: "sku", Value: g.words(1)}, {Key: "qty", Value: 1 + g.intn(3)}})
		}
		return order{customer: buyer(), doc: bson.D{{Key: "_id", Value: i}, {Key: "status", Value: g.pick(statuses)},
			{Key: "createdAt", Value: t0.Add(time.Duration(i) * time.Minute)}, {Key: "items", Value: items},
			{Key: "total", Value: float64(g.intn(50000)) / 100}}}
	}
	all := make([]order, orders)
	for i := range all {
		all[i] = mkOrder(i)
	}
	e.step()

	nCustomers, nOrders := e.coll("naive_customers"), e.coll("naive_orders")
	if _, err := nOrders.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "customerId", Value: 1}, {Key: "createdAt", Value: -1}}}); err != nil {
		return nil, nil, err
	}
	if _, err := nCustomers.InsertMany(ctx, customerDocs); err != nil {
		return nil, nil, err
	}
	naiveDoc := func(o order) bson.D { return append(bson.D{{Key: "customerId", Value: o.customer}}, o.doc...) }
	docs := make([]any, len(all))
	for i, o := range all {
		docs[i] = naiveDoc(o)
	}
	if _, err := nOrders.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	pCustomers, pOrders := e.coll("customers"), e.coll("orders")
	ref, err := extref.New[bson.D, bson.D, bson.D](pCustomers, pOrders, extref.Config{Field: "customer", Fields: []string{"name"},
		Frozen:  bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"delivered", "cancelled"}}}}},
		OrderBy: bson.D{{Key: "createdAt", Value: -1}}})
	if err != nil {
		return nil, nil, err
	}
	if err := ref.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	if _, err := pCustomers.InsertMany(ctx, customerDocs); err != nil {
		return nil, nil, err
	}
	// Bulk load: one Copy per customer, the orders inserted in one batch.
	copies := make(map[int]bson.D, customers)
	for i, o := range all {
		cp, ok := copies[o.customer]
		if !ok {
			if cp, err = ref.Copy(ctx, o.customer); err != nil {
				return nil, nil, err
			}
			copies[o.customer] = cp
		}
		docs[i] = append(append(bson.D{}, o.doc...), bson.E{Key: "customer", Value: cp})
	}
	if _, err := pOrders.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	e.step()

	// The order page: orders drawn uniformly, as customers look at theirs.
	reads := e.n(400, 20)
	pages := make([]int, reads+warmup)
	for i := range pages {
		pages[i] = g.intn(orders)
	}
	naiveRead, err := e.read(reads, func(i int) error {
		var o struct {
			CustomerID int `bson:"customerId"`
		}
		if err := nOrders.FindOne(ctx, bson.D{{Key: "_id", Value: pages[i]}}).Decode(&o); err != nil {
			return err
		}
		var c bson.Raw
		return nCustomers.FindOne(ctx, bson.D{{Key: "_id", Value: o.CustomerID}}).Decode(&c)
	})
	if err != nil {
		return nil, nil, err
	}
	patRead, err := e.read(reads, func(i int) error {
		var o bson.Raw
		return pOrders.FindOne(ctx, bson.D{{Key: "_id", Value: pages[i]}}).Decode(&o)
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// New orders: the extended reference reads the customer first.
	writes := e.n(200, 10)
	fresh := make([]order, writes+warmup)
	for i := range fresh {
		fresh[i] = mkOrder(orders + i)
	}
	naiveCreate, err := e.run(writes, true, func(i int) error {
		_, err := nOrders.InsertOne(ctx, naiveDoc(fresh[i]))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patCreate, err := e.run(writes, true, func(i int) error {
		_, err := ref.Insert(ctx, fresh[i].customer, fresh[i].doc)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// Renames, of customers drawn by the same skew: the fan-out touches
	// each live order of the customer.
	renames := e.n(100, 10)
	who := make([]int, renames+warmup)
	names := make([]string, renames+warmup)
	for i := range who {
		who[i], names[i] = buyer(), g.name()
	}
	naiveRename, err := e.run(renames, true, func(i int) error {
		_, err := nCustomers.UpdateOne(ctx, bson.D{{Key: "_id", Value: who[i]}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: names[i]}}}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patRename, err := e.run(renames, true, func(i int) error {
		_, _, err := ref.Update(ctx, who[i], bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: names[i]}}}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_customers", "naive_orders")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("customers", "orders")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("order page", naiveRead, patRead)...)
	ms = append(ms, writeMetrics("create an order", naiveCreate, patCreate)...)
	ms = append(ms, writeMetrics("rename a customer (fan-out)", naiveRename, patRename)...)
	// Between the source write and the end of the fan-out the live
	// orders show the old name: the fan-out's own duration.
	ms = append(ms, Metric{Name: "staleness window after a rename", Kind: KindAccuracy, Unit: "µs", Better: Lower,
		Naive: 0, Pattern: patRename.TimeByName["update"], Timing: true})
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("order page", naiveRead.opStats, patRead.opStats),
		latency("rename a customer", naiveRename, patRename),
	}, nil
}
