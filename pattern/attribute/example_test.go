package attribute_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/attribute"
)

// Product specs as key/value pairs behind one index; every query is an
// $elemMatch, and a number given as a string is refused.
func Example() {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(db.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)
	products := client.Database("shop").Collection("products")

	specs, err := attribute.New(products, attribute.Config{
		Field: "specs",
		Kinds: map[string]attribute.Kind{"volumeMl": attribute.Number, "color": attribute.String},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := specs.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	for _, p := range []struct {
		id    int
		name  string
		attrs []attribute.Attr
	}{
		{1, "Water bottle", []attribute.Attr{{Name: "color", Value: "blue"}, {Name: "volumeMl", Value: 500}}},
		{2, "Flask", []attribute.Attr{{Name: "color", Value: "red"}, {Name: "capColor", Value: "blue"}, {Name: "volumeMl", Value: 350}}},
	} {
		if _, err := specs.Insert(ctx, bson.D{{Key: "_id", Value: p.id}, {Key: "name", Value: p.name}}, p.attrs...); err != nil {
			log.Fatal(err)
		}
	}
	if err := specs.Add(ctx, 2, "color", "green"); errors.Is(err, attribute.ErrExists) {
		fmt.Println("flask already has a color")
	}
	if err := specs.Replace(ctx, 2, "color", "green"); err != nil {
		log.Fatal(err)
	}
	if err := specs.Add(ctx, 1, "volumeMl", "750"); err != nil {
		fmt.Println(err)
	}

	filter, err := specs.Filter(attribute.All(attribute.Where("color").Eq("blue")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("filter:", filter)
	find := func(f attribute.Filter) {
		c, err := specs.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			log.Fatal(err)
		}
		var docs []struct {
			Name string `bson:"name"`
		}
		if err := c.All(ctx, &docs); err != nil {
			log.Fatal(err)
		}
		fmt.Println("found:", docs)
	}
	find(attribute.All(attribute.Where("color").Eq("blue")))
	find(attribute.All(attribute.Where("volumeMl").Gte(300).Lt(400)))
	find(attribute.Any(attribute.Where("color").Eq("green"), attribute.Where("volumeMl").Gt(400)))

	var stored bson.Raw
	if err := products.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&stored); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", stored.Lookup("specs"))
	// Output:
	// flask already has a color
	// attribute: add: invalid attribute value: attribute "volumeMl": "750" is a number stored as a string (declare the attribute a String, or pass a number)
	// filter: {"specs":{"$elemMatch":{"k":"color","v":{"$eq":"blue"}}}}
	// found: [{Water bottle}]
	// found: [{Flask}]
	// found: [{Water bottle} {Flask}]
	// stored: [{"k": "color","v": "green"},{"k": "capColor","v": "blue"},{"k": "volumeMl","v": {"$numberInt":"350"}}]
}

// The wildcard form keeps attributes in a sub-document under
// {"props.$**": 1}; the same builder compiles to dotted paths.
func ExampleNewWildcard() {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(db.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)
	products := client.Database("shop").Collection("products")

	props, err := attribute.NewWildcard(products, attribute.Config{NumericStrings: attribute.Normalize})
	if err != nil {
		log.Fatal(err)
	}
	if err := props.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := props.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, attribute.Attr{Name: "color", Value: "blue"}, attribute.Attr{Name: "volumeMl", Value: "500"}); err != nil {
		log.Fatal(err)
	}
	if err := props.Set(ctx, 1, "weightKg", 0.2); err != nil {
		log.Fatal(err)
	}
	f, err := props.Filter(attribute.All(attribute.Where("volumeMl").Gte(400), attribute.Where("color").Ne("red")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("filter:", f)
	n, err := props.Count(ctx, attribute.All(attribute.Where("volumeMl").Gte(400), attribute.Where("color").Ne("red")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("matches:", n)
	var stored bson.Raw
	if err := products.FindOne(ctx, bson.D{}).Decode(&stored); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", stored)
	// Output:
	// filter: {"$and":[{"props.volumeMl":{"$gte":{"$numberInt":"400"}}},{"props.color":{"$exists":true,"$ne":"red"}}]}
	// matches: 1
	// stored: {"_id": {"$numberInt":"1"},"props": {"color": "blue","volumeMl": {"$numberLong":"500"},"weightKg": {"$numberDouble":"0.2"}}}
}
