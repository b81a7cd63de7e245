package polymorphic

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// loadMethods inserts n customers' cards and bank accounts, half each.
func loadMethods(t testing.TB, m methods, n int) {
	t.Helper()
	ctx := context.Background()
	var cards []Card
	var banks []Bank
	for i := range n {
		if i%2 == 0 {
			cards = append(cards, card(int64(i), i%48))
		} else {
			banks = append(banks, bank(int64(i)))
		}
	}
	if _, err := m.cards.InsertMany(ctx, cards); err != nil {
		t.Fatal(err)
	}
	if _, err := m.banks.InsertMany(ctx, banks); err != nil {
		t.Fatal(err)
	}
}

// TestPartialIndexPlan checks that the variant's query, which repeats the
// discriminator, scans the partial index (isPartial true, bounds on
// card.expiresAt), and that the same condition without the discriminator
// cannot use it: the mistake the builder prevents.
func TestPartialIndexPlan(t *testing.T) {
	m := newMethods(t, Config{})
	if err := m.c.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	loadMethods(t, m, 400)
	cond := bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: t0.AddDate(0, 6, 0)}}}}
	f, err := m.cards.Filter(cond)
	if err != nil {
		t.Fatal(err)
	}
	res := explaintest.Run(t, m.coll.Database(), bson.D{{Key: "find", Value: m.coll.Name()}, {Key: "filter", Value: f}})
	ix := res.MustStage("IXSCAN")
	if ix.Index != "card_card.expiresAt_1" {
		t.Errorf("index %q: %s", ix.Index, res)
	}
	if p, ok := ix.Doc.Lookup("isPartial").BooleanOK(); !ok || !p {
		t.Errorf("isPartial %v", ix.Doc.Lookup("isPartial"))
	}
	if b := ix.Bounds("card.expiresAt"); len(b) != 1 || b[0] != fmt.Sprintf("[new Date(-9223372036854775808), new Date(%d))", t0.AddDate(0, 6, 0).UnixMilli()) {
		t.Errorf("bounds %v", b)
	}
	want := int64(0)
	for i := 0; i < 400; i += 2 {
		if i%48 < 6 {
			want++
		}
	}
	if n := res.NReturned(); n != want {
		t.Errorf("returned %d, want %d", n, want)
	}
	if k := res.KeysExamined(); k > want+1 {
		t.Errorf("keys examined %d for %d matches", k, want)
	}

	forgot := explaintest.Run(t, m.coll.Database(), bson.D{{Key: "find", Value: m.coll.Name()}, {Key: "filter", Value: cond}})
	if forgot.Uses("card_card.expiresAt_1") || !forgot.HasStage("COLLSCAN") {
		t.Errorf("without the discriminator: %s", forgot)
	}
	if d := forgot.DocsExamined(); d != 400 {
		t.Errorf("without the discriminator examined %d", d)
	}
}

// TestHintPartialIndexRefused checks the catalogue's last assertion: a
// hint of the partial index for a query that does not imply its filter
// is refused by the planner rather than answered wrongly.
func TestHintPartialIndexRefused(t *testing.T) {
	ctx := context.Background()
	m := newMethods(t, Config{})
	if err := m.c.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	loadMethods(t, m, 20)
	cond := bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: t0.AddDate(0, 6, 0)}}}}
	cur, err := m.coll.Find(ctx, cond, options.Find().SetHint("card_card.expiresAt_1"))
	if err == nil {
		var out []bson.Raw
		err = cur.All(ctx, &out)
	}
	if err == nil {
		t.Error("a hinted partial index answered a query that does not imply its filter")
	}
	f, _ := m.cards.Filter(cond)
	if _, err := m.coll.Find(ctx, f, options.Find().SetHint("card_card.expiresAt_1")); err != nil {
		t.Errorf("hint with the discriminator: %v", err)
	}
}
