package polymorphic

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestInsertDecode checks that each variant is stored with its
// discriminator right after _id and decodes back into its own type, one
// by one and across variants.
func TestInsertDecode(t *testing.T) {
	ctx := context.Background()
	m := newMethods(t, Config{})
	cid, err := m.cards.Insert(ctx, card(811, 8))
	if err != nil {
		t.Fatal(err)
	}
	bid, err := m.c.Insert(ctx, bank(811))
	if err != nil {
		t.Fatal(err)
	}
	w := Wallet{CustomerID: 811, Label: "PayPal", CreatedAt: t0}
	w.Wallet.Provider = "paypal"
	wid, err := m.c.Insert(ctx, &w)
	if err != nil {
		t.Fatal(err)
	}
	doc := raw(t, m.coll, cid)
	els, _ := doc.Elements()
	if els[0].Key() != "_id" || els[1].Key() != "type" || els[1].Value().StringValue() != "card" {
		t.Errorf("stored card %v", doc)
	}
	if got := raw(t, m.coll, wid).Lookup("type").StringValue(); got != "wallet" {
		t.Errorf("wallet type %q", got)
	}
	if n := len(raw(t, m.coll, wid)); n == 0 {
		t.Fatal("empty")
	}
	all, err := m.c.Find(ctx, bson.D{{Key: "customerId", Value: 811}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("%d methods", len(all))
	}
	if c, ok := all[0].(Card); !ok || c.Card.Last4 != "4242" {
		t.Errorf("first %#v", all[0])
	}
	if b, ok := all[1].(Bank); !ok || b.Bank.IBAN == "" || b.ID != bid {
		t.Errorf("second %#v", all[1])
	}
	if w, ok := all[2].(Wallet); !ok || w.Type != "wallet" || w.Wallet.Provider != "paypal" {
		t.Errorf("third %#v", all[2])
	}
	if _, err := m.cards.Get(ctx, bid); !errors.Is(err, ErrNotFound) {
		t.Errorf("a bank read as a card: %v", err)
	}
	if _, err := m.c.Insert(ctx, 3); !errors.Is(err, ErrUnknownVariant) {
		t.Errorf("insert int: %v", err)
	}
	if _, err := m.wallet.Insert(ctx, Wallet{Type: "card"}); !errors.Is(err, ErrWrongVariant) {
		t.Errorf("wallet saying card: %v", err)
	}
	if _, err := m.coll.InsertOne(ctx, bson.D{{Key: "type", Value: "crypto"}, {Key: "customerId", Value: 811}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.c.Find(ctx, bson.D{{Key: "customerId", Value: 811}}); !errors.Is(err, ErrUnknownVariant) {
		t.Errorf("find over an unknown variant: %v", err)
	}
}

// TestVariantWrites checks Update, Replace (a change of variant) and
// Delete, each limited to the variant's documents.
func TestVariantWrites(t *testing.T) {
	ctx := context.Background()
	m := newMethods(t, Config{})
	id, err := m.cards.Insert(ctx, card(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cards.Update(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "label", Value: "Work Visa"}}}}); err != nil {
		t.Fatal(err)
	}
	if got := raw(t, m.coll, id).Lookup("label").StringValue(); got != "Work Visa" {
		t.Errorf("label %q", got)
	}
	if err := m.banks.Update(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "label", Value: "x"}}}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("bank update of a card: %v", err)
	}
	if err := m.cards.Update(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "type", Value: "bank"}}}}); !errors.Is(err, ErrWrongVariant) {
		t.Errorf("update of the discriminator: %v", err)
	}
	if _, err := m.cards.Filter(bson.D{{Key: "type", Value: "bank"}}); !errors.Is(err, ErrWrongVariant) {
		t.Errorf("card filter on bank: %v", err)
	}
	if f, err := m.cards.Filter(bson.D{{Key: "type", Value: "card"}, {Key: "customerId", Value: 1}}); err != nil || len(f) != 2 {
		t.Errorf("filter %v %v", f, err)
	}
	b := bank(1)
	if err := m.banks.Replace(ctx, id, b); err != nil {
		t.Fatal(err)
	}
	doc := raw(t, m.coll, id)
	if doc.Lookup("type").StringValue() != "bank" || doc.Lookup("card").Type != 0 {
		t.Errorf("replaced %v", doc)
	}
	if err := m.cards.Delete(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("card delete of a bank: %v", err)
	}
	if err := m.banks.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.coll.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("%d left", n)
	}
}

// TestValidator checks the generated oneOf validator: every variant's own
// values pass, a card without its card sub-document is refused with 121
// naming oneOf, ActionWarn lets it through, and an existing collection
// gets the validator through collMod.
func TestValidator(t *testing.T) {
	ctx := context.Background()
	m := newMethods(t, Config{})
	if _, err := m.coll.InsertOne(ctx, bson.D{{Key: "pre", Value: 1}}); err != nil {
		t.Fatal(err) // the collection exists: EnsureValidator goes through collMod
	}
	if err := m.c.EnsureValidator(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.cards.Insert(ctx, card(811, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.banks.Insert(ctx, bank(811)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.wallet.Insert(ctx, Wallet{CustomerID: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	_, err := m.coll.InsertOne(ctx, bson.D{{Key: "type", Value: "card"}, {Key: "customerId", Value: 811}, {Key: "label", Value: "x"}, {Key: "createdAt", Value: t0}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 {
		t.Fatalf("card without card: %v", err)
	}
	if d := we.WriteErrors[0].Details.String(); !contains(d, "oneOf") || !contains(d, "failingDocumentId") {
		t.Errorf("details %s", d)
	}
	_, err = m.coll.InsertOne(ctx, bson.D{{Key: "type", Value: "crypto"}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 121 {
		t.Errorf("unknown variant: %v", err)
	}

	w := newMethods(t, Config{ValidationAction: ActionWarn})
	if err := w.c.EnsureValidator(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.coll.InsertOne(ctx, bson.D{{Key: "type", Value: "card"}}); err != nil {
		t.Errorf("warn: %v", err)
	}
	var info bson.Raw
	cur, err := w.coll.Database().ListCollections(ctx, bson.D{{Key: "name", Value: "paymentMethods"}})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Next(ctx) {
		info = cur.Current
	}
	cur.Close(ctx)
	if a := info.Lookup("options", "validationAction").StringValue(); a != "warn" {
		t.Errorf("validationAction %q in %v", a, info)
	}
}

// contains reports whether s holds sub.
func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestVerify checks that Verify names every document that fits no
// variant (written before the validator) and none of the good ones.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	m := newMethods(t, Config{})
	for i := range 5 {
		if _, err := m.cards.Insert(ctx, card(int64(i), i)); err != nil {
			t.Fatal(err)
		}
	}
	bad := []bson.D{
		{{Key: "_id", Value: "none"}, {Key: "customerId", Value: 1}},
		{{Key: "_id", Value: "crypto"}, {Key: "type", Value: "crypto"}},
		{{Key: "_id", Value: "nocard"}, {Key: "type", Value: "card"}, {Key: "customerId", Value: 1}, {Key: "label", Value: "x"}, {Key: "createdAt", Value: t0}},
		{{Key: "_id", Value: "undecodable"}, {Key: "type", Value: "card"}, {Key: "customerId", Value: "811"}, {Key: "label", Value: "x"}, {Key: "createdAt", Value: t0}, {Key: "card", Value: bson.D{}}},
	}
	for _, d := range bad {
		if _, err := m.coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	r, err := m.c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checked != 9 || r.Problems != 4 || r.OK() {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{`"none"`, `"crypto"`, `"nocard"`, `"undecodable"`} {
		found := false
		for _, d := range r.Details {
			found = found || contains(d, want)
		}
		if !found {
			t.Errorf("%s not reported: %v", want, r.Details)
		}
	}
}

// TestConfig checks Validate and Register's refusals.
func TestConfig(t *testing.T) {
	for _, c := range []Config{{Field: "a.b"}, {Field: "_id"}, {ValidationAction: "log"}, {ValidationLevel: "off"}} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	m := newMethods(t, Config{})
	if _, err := Register[Card](m.c, "card2"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("type twice: %v", err)
	}
	if _, err := Register[struct{ X int }](m.c, "bank"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("name twice: %v", err)
	}
	if _, err := Register[int](m.c, "n"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("int: %v", err)
	}
	if got := m.cards.IndexNames(); len(got) != 1 || got[0] != "card_card.expiresAt_1" {
		t.Errorf("index names %v", got)
	}
}
