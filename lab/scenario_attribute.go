package lab

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/attribute"
)

// attributeScenario: product specs. Products carry a color and a size
// and a few of 30 optional specs; the catalogue filters on any of them.
// Naive: one top-level field per spec, each with its own index (32). Attribute:
// specs: [{k, v}] under one compound multikey index {specs.k, specs.v},
// queried with $elemMatch; the price is bigger documents, a wider index
// scan where two specs are combined, and an upsert of a spec that costs
// a second round trip when the spec is new.
var attributeScenario = scenario{
	pattern: "attribute",
	title:   "product specs: the catalogue filters on any of 32 specs",
	steps:   6,
	run:     runAttribute,
}

// attributeOptional is the number of optional specs.
const attributeOptional = 30

var (
	attributeColors = []string{"blue", "red", "green", "black", "white", "grey", "pink", "teal"}
	attributeSizes  = []string{"XS", "S", "M", "L", "XL"}
)

// runAttribute generates the scenario's data, loads it in both forms and
// measures them.
func runAttribute(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	products := e.n(2000, 40)
	spec := g.zipf(attributeOptional, 1.1) // some specs are on many products
	type product struct {
		name  string
		attrs []attribute.Attr
	}
	mk := func() product {
		p := product{name: g.words(3), attrs: []attribute.Attr{
			{Name: "color", Value: g.pick(attributeColors)}, {Name: "size", Value: g.pick(attributeSizes)}}}
		seen := map[int]bool{}
		for range g.heavy(2, 1.5, 12) {
			k := spec()
			if !seen[k] {
				seen[k] = true
				p.attrs = append(p.attrs, attribute.Attr{Name: fmt.Sprintf("spec%d", k), Value: int64(g.intn(10))})
			}
		}
		return p
	}
	all := make([]product, products)
	for i := range all {
		all[i] = mk()
	}
	flat := func(p product) bson.D {
		d := bson.D{{Key: "name", Value: p.name}}
		for _, a := range p.attrs {
			d = append(d, bson.E{Key: a.Name, Value: a.Value})
		}
		return d
	}
	e.step()

	nProducts := e.coll("naive_products")
	models := []mongo.IndexModel{{Keys: bson.D{{Key: "color", Value: 1}}}, {Keys: bson.D{{Key: "size", Value: 1}}}}
	for k := range attributeOptional {
		models = append(models, mongo.IndexModel{Keys: bson.D{{Key: fmt.Sprintf("spec%d", k), Value: 1}}})
	}
	if _, err := nProducts.Indexes().CreateMany(ctx, models); err != nil {
		return nil, nil, err
	}
	docs := make([]any, len(all))
	for i, p := range all {
		docs[i] = flat(p)
	}
	if _, err := nProducts.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	s, err := attribute.New[bson.D](e.coll("products"), attribute.Config{Field: "specs",
		Kinds: map[string]attribute.Kind{"color": attribute.String, "size": attribute.String}})
	if err != nil {
		return nil, nil, err
	}
	if err := s.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	for _, p := range all {
		if _, err := s.Insert(ctx, bson.D{{Key: "name", Value: p.name}}, p.attrs...); err != nil {
			return nil, nil, err
		}
	}
	e.step()

	reads := e.n(200, 10)
	type query struct {
		color, size string
		spec        string
		v           int64
	}
	qs := make([]query, reads+warmup)
	for i := range qs {
		qs[i] = query{color: g.pick(attributeColors), size: g.pick(attributeSizes), spec: fmt.Sprintf("spec%d", spec()), v: int64(g.intn(10))}
	}
	find := func(coll *mongo.Collection, filter bson.D) error {
		cur, err := coll.Find(ctx, filter)
		if err != nil {
			return err
		}
		var out []bson.Raw
		return cur.All(ctx, &out)
	}
	naiveOne, err := e.read(reads, func(i int) error {
		return find(nProducts, bson.D{{Key: qs[i].spec, Value: qs[i].v}})
	})
	if err != nil {
		return nil, nil, err
	}
	patOne, err := e.read(reads, func(i int) error {
		return findAttr(ctx, s, attribute.All(attribute.Where(qs[i].spec).Eq(qs[i].v)))
	})
	if err != nil {
		return nil, nil, err
	}
	naiveTwo, err := e.read(reads, func(i int) error {
		return find(nProducts, bson.D{{Key: "color", Value: qs[i].color}, {Key: "size", Value: qs[i].size}})
	})
	if err != nil {
		return nil, nil, err
	}
	patTwo, err := e.read(reads, func(i int) error {
		return findAttr(ctx, s, attribute.All(attribute.Where("color").Eq(qs[i].color), attribute.Where("size").Eq(qs[i].size)))
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	writes := e.n(200, 10)
	fresh := make([]product, writes+warmup)
	for i := range fresh {
		fresh[i] = mk()
	}
	naiveIns, err := e.run(writes, true, func(i int) error {
		_, err := nProducts.InsertOne(ctx, flat(fresh[i]))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var ids []any
	patIns, err := e.run(writes, true, func(i int) error {
		doc, err := s.Insert(ctx, bson.D{{Key: "name", Value: fresh[i].name}}, fresh[i].attrs...)
		if err != nil {
			return err
		}
		ids = append(ids, idOfD(doc))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// Setting a spec on a product, new or existing: one $set in the naive
	// form; Replace, then Add when the spec is new, in the attribute form.
	var naiveIDs []any
	cur, err := nProducts.Find(ctx, bson.D{})
	if err != nil {
		return nil, nil, err
	}
	for cur.Next(ctx) {
		naiveIDs = append(naiveIDs, cur.Current.Lookup("_id"))
	}
	if err := cur.Close(ctx); err != nil {
		return nil, nil, err
	}
	sets := make([]query, writes+warmup)
	for i := range sets {
		sets[i] = query{spec: fmt.Sprintf("spec%d", spec()), v: int64(g.intn(10))}
	}
	naiveSet, err := e.run(writes, true, func(i int) error {
		_, err := nProducts.UpdateOne(ctx, bson.D{{Key: "_id", Value: naiveIDs[len(naiveIDs)-1-i]}},
			bson.D{{Key: "$set", Value: bson.D{{Key: sets[i].spec, Value: sets[i].v}}}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patSet, err := e.run(writes, true, func(i int) error {
		return s.Set(ctx, ids[len(ids)-1-i], sets[i].spec, sets[i].v)
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_products")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("products")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("filter on one spec", naiveOne, patOne)...)
	ms = append(ms, readMetrics("filter on color and size", naiveTwo, patTwo)...)
	ms = append(ms, writeMetrics("insert a product", naiveIns, patIns)...)
	ms = append(ms, writeMetrics("set a spec", naiveSet, patSet)...)
	ms = append(ms, Metric{Name: "indexes", Kind: KindStorage, Unit: "indexes", Better: Lower, Naive: float64(nStore.Indexes), Pattern: float64(pStore.Indexes)})
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("filter on color and size", naiveTwo.opStats, patTwo.opStats),
		latency("insert a product", naiveIns, patIns),
	}, nil
}

// findAttr runs an attribute query and reads every result.
func findAttr(ctx context.Context, s *attribute.Store[bson.D], f attribute.Filter) error {
	cur, err := s.Cursor(ctx, f)
	if err != nil {
		return err
	}
	var out []bson.Raw
	return cur.All(ctx, &out)
}

// idOfD returns the _id of a stored document.
func idOfD(d bson.D) any {
	for _, e := range d {
		if e.Key == "_id" {
			return e.Value
		}
	}
	return nil
}
