package polymorphic

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// Card, Bank and Wallet are the catalogue's payment methods.
type Card struct {
	ID         bson.ObjectID `bson:"_id,omitempty"`
	CustomerID int64         `bson:"customerId"`
	Label      string        `bson:"label"`
	CreatedAt  time.Time     `bson:"createdAt"`
	Card       CardInfo      `bson:"card"`
}

// CardInfo is a card's own fields.
type CardInfo struct {
	Brand     string    `bson:"brand"`
	Last4     string    `bson:"last4"`
	ExpiresAt time.Time `bson:"expiresAt"`
}

// Bank is a bank account.
type Bank struct {
	ID         bson.ObjectID `bson:"_id,omitempty"`
	CustomerID int64         `bson:"customerId"`
	Label      string        `bson:"label"`
	CreatedAt  time.Time     `bson:"createdAt"`
	Bank       struct {
		IBAN string `bson:"iban"`
		BIC  string `bson:"bic,omitempty"`
	} `bson:"bank"`
}

// Wallet is a wallet, with its own discriminator field.
type Wallet struct {
	ID         bson.ObjectID `bson:"_id,omitempty"`
	Type       string        `bson:"type"`
	CustomerID int64         `bson:"customerId"`
	Label      string        `bson:"label"`
	CreatedAt  time.Time     `bson:"createdAt"`
	Wallet     struct {
		Provider string `bson:"provider"`
	} `bson:"wallet"`
}

// methods is a polymorphic paymentMethods collection with its variants.
type methods struct {
	c      *Collection
	coll   *mongo.Collection
	cards  *Variant[Card]
	banks  *Variant[Bank]
	wallet *Variant[Wallet]
}

// newMethods declares paymentMethods in a fresh database.
func newMethods(t testing.TB, cfg Config) methods {
	t.Helper()
	coll := testenv.Database(t).Collection("paymentMethods")
	c, err := New(coll, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := methods{c: c, coll: coll}
	if m.cards, err = Register[Card](c, "card", Index{Keys: bson.D{{Key: "card.expiresAt", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if m.banks, err = Register[Bank](c, "bank"); err != nil {
		t.Fatal(err)
	}
	if m.wallet, err = Register[Wallet](c, "wallet"); err != nil {
		t.Fatal(err)
	}
	return m
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// card returns a card of customer cust expiring months after t0.
func card(cust int64, months int) Card {
	return Card{CustomerID: cust, Label: "Visa", CreatedAt: t0,
		Card: CardInfo{Brand: "visa", Last4: "4242", ExpiresAt: t0.AddDate(0, months, 0)}}
}

// bank returns a bank account of customer cust.
func bank(cust int64) Bank {
	b := Bank{CustomerID: cust, Label: "IBAN", CreatedAt: t0}
	b.Bank.IBAN = "DE89370400440532013000"
	return b
}

// raw reads the stored document id.
func raw(t testing.TB, coll *mongo.Collection, id any) bson.Raw {
	t.Helper()
	doc, err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
