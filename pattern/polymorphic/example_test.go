package polymorphic_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/polymorphic"
)

// Card and Bank are two kinds of payment method kept in one collection.
type Card struct {
	CustomerID int64     `bson:"customerId"`
	Label      string    `bson:"label"`
	Last4      string    `bson:"last4"`
	ExpiresAt  time.Time `bson:"expiresAt"`
}

// Bank is a bank account.
type Bank struct {
	CustomerID int64  `bson:"customerId"`
	Label      string `bson:"label"`
	IBAN       string `bson:"iban"`
}

// shop opens an in-memory engine and returns its "shop" database and a
// function that closes both.
func shop(ctx context.Context) (*mongo.Database, func()) {
	eng, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	return client.Database("shop"), func() { client.Disconnect(ctx); eng.Close() }
}

// paymentMethods declares the collection, its two variants, the card's
// partial index and the validator.
func paymentMethods(ctx context.Context, db *mongo.Database) (*polymorphic.Collection, *polymorphic.Variant[Card], *polymorphic.Variant[Bank]) {
	methods, err := polymorphic.New(db.Collection("paymentMethods"), polymorphic.Config{
		Field:   "type",
		Indexes: []mongo.IndexModel{{Keys: bson.D{{Key: "customerId", Value: 1}}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	cards, err := polymorphic.Register[Card](methods, "card", polymorphic.Index{Keys: bson.D{{Key: "expiresAt", Value: 1}}})
	if err != nil {
		log.Fatal(err)
	}
	banks, err := polymorphic.Register[Bank](methods, "bank")
	if err != nil {
		log.Fatal(err)
	}
	if err := methods.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if err := methods.EnsureValidator(ctx); err != nil {
		log.Fatal(err)
	}
	return methods, cards, banks
}

// New declares a polymorphic collection; each variant is registered with
// its own Go type, and Find decodes every document into its variant's.
func ExampleNew() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	methods, cards, banks := paymentMethods(ctx, db)

	cards.Insert(ctx, Card{CustomerID: 811, Label: "Visa", Last4: "4242", ExpiresAt: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)})
	banks.Insert(ctx, Bank{CustomerID: 811, Label: "Savings", IBAN: "DE89370400440532013000"})
	all, err := methods.Find(ctx, bson.D{{Key: "customerId", Value: 811}})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range all {
		switch m := m.(type) {
		case Card:
			fmt.Println("card", m.Last4)
		case Bank:
			fmt.Println("bank", m.IBAN)
		}
	}
	// Output:
	// card 4242
	// bank DE89370400440532013000
}

// Filter puts the discriminator in front of every variant query, so the
// card's partial index on expiresAt serves it.
func ExampleVariant_Filter() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	_, cards, _ := paymentMethods(ctx, db)

	f, err := cards.Filter(bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: "cutoff"}}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f)
	_, err = cards.Filter(bson.D{{Key: "type", Value: "bank"}})
	fmt.Println(errors.Is(err, polymorphic.ErrWrongVariant))
	fmt.Println(cards.IndexNames())
	// Output:
	// {"type":"card","expiresAt":{"$lt":"cutoff"}}
	// true
	// [card_expiresAt_1]
}

// Find reads one variant's documents into its type.
func ExampleVariant_Find() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	_, cards, _ := paymentMethods(ctx, db)
	for i, m := range []time.Month{3, 9, 5} {
		cards.Insert(ctx, Card{CustomerID: int64(i), Label: "Visa", Last4: fmt.Sprint(4240 + i), ExpiresAt: time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC)})
	}
	expiring, err := cards.Find(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}}}},
		options.Find().SetSort(bson.D{{Key: "expiresAt", Value: 1}}))
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range expiring {
		fmt.Println(c.Last4, c.ExpiresAt.Format("2006-01"))
	}
	// Output:
	// 4240 2026-03
	// 4242 2026-05
}

// EnsureValidator installs a $jsonSchema oneOf generated from the
// variants' structs: a card without its last4 is refused with code 121.
func ExampleCollection_EnsureValidator() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	paymentMethods(ctx, db)

	_, err := db.Collection("paymentMethods").InsertOne(ctx, bson.D{
		{Key: "type", Value: "card"}, {Key: "customerId", Value: 811}, {Key: "label", Value: "Visa"}})
	var we mongo.WriteException
	if errors.As(err, &we) {
		fmt.Println(we.WriteErrors[0].Code, we.WriteErrors[0].Message)
	}
	// Output:
	// 121 Document failed validation
}

// Verify names the documents that fit no variant, such as those written
// before the validator or with bypassDocumentValidation.
func ExampleCollection_Verify() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	methods, _, banks := paymentMethods(ctx, db)
	banks.Insert(ctx, Bank{CustomerID: 1, Label: "Main", IBAN: "FR76"})
	db.Collection("paymentMethods").InsertOne(ctx, bson.D{{Key: "_id", Value: "old"}, {Key: "type", Value: "cheque"}},
		options.InsertOne().SetBypassDocumentValidation(true))

	r, err := methods.Verify(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Checked, r.Problems)
	fmt.Println(r.Details[0])
	// Output:
	// 2 1
	// "old": type "cheque" is no registered variant
}
