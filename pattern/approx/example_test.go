package approx_test

import (
	"context"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/approx"
)

// Page views are written once per ten; Flush on shutdown writes the rest.
func Example() {
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)

	views, err := approx.New(client.Database("site").Collection("pageViews"), approx.Config{
		Field: "views", N: 10, Mode: approx.Deterministic,
	})
	if err != nil {
		log.Fatal(err)
	}
	for range 25 {
		views.Incr(ctx, "page:/pricing")
	}
	n, _ := views.Get(ctx, "page:/pricing")
	fmt.Printf("after 25 views: stored %d, pending %d, %d writes\n", n, views.Pending("page:/pricing"), views.Writes())

	if err := views.Flush(ctx); err != nil { // on shutdown
		log.Fatal(err)
	}
	n, _ = views.Get(ctx, "page:/pricing")
	fmt.Printf("after Flush:    stored %d, pending %d, %d writes\n", n, views.Pending("page:/pricing"), views.Writes())
	// Output:
	// after 25 views: stored 20, pending 5, 2 writes
	// after Flush:    stored 25, pending 0, 3 writes
}
