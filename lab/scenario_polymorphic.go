package lab

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/polymorphic"
)

// polymorphicScenario: a shop's payment methods, cards, bank accounts and
// wallets. The account page lists a customer's methods; a nightly job
// finds the cards expiring soon. Naive: one collection per kind, so the
// list is three queries. Polymorphic: one collection with a discriminator,
// a $jsonSchema oneOf validator, and a partial index on the cards' expiry
// that the card query, always repeating {type: "card"}, can use; the
// price is the discriminator stored in every document and the validator
// run on every write.
var polymorphicScenario = scenario{
	pattern: "polymorphic",
	title:   "payment methods: list a customer's cards, banks and wallets",
	steps:   5,
	run:     runPolymorphic,
}

// pmCard, pmBank and pmWallet are the three kinds of payment method.
type pmCard struct {
	CustomerID int64     `bson:"customerId"`
	Label      string    `bson:"label"`
	CreatedAt  time.Time `bson:"createdAt"`
	Card       struct {
		Brand     string    `bson:"brand"`
		Last4     string    `bson:"last4"`
		ExpiresAt time.Time `bson:"expiresAt"`
	} `bson:"card"`
}

// pmBank is a bank account.
type pmBank struct {
	CustomerID int64     `bson:"customerId"`
	Label      string    `bson:"label"`
	CreatedAt  time.Time `bson:"createdAt"`
	Bank       struct {
		IBAN string `bson:"iban"`
	} `bson:"bank"`
}

// pmWallet is a wallet.
type pmWallet struct {
	CustomerID int64     `bson:"customerId"`
	Label      string    `bson:"label"`
	CreatedAt  time.Time `bson:"createdAt"`
	Wallet     struct {
		Provider string `bson:"provider"`
	} `bson:"wallet"`
}

// runPolymorphic generates the scenario's data, loads it in both forms
// and measures them.
func runPolymorphic(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	customers := e.n(2000, 40)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var cards []pmCard
	var banks []pmBank
	var wallets []pmWallet
	for c := range customers {
		for range 1 + g.heavy(1, 1.5, 6) {
			at := t0.Add(-time.Duration(g.intn(1000)) * time.Hour)
			switch k := g.intn(10); {
			case k < 6:
				var x pmCard
				x.CustomerID, x.Label, x.CreatedAt = int64(c), g.pick([]string{"Visa", "Mastercard", "Amex"}), at
				x.Card.Brand, x.Card.Last4 = x.Label, g.words(1)
				x.Card.ExpiresAt = t0.AddDate(0, g.intn(48), 0)
				cards = append(cards, x)
			case k < 9:
				var x pmBank
				x.CustomerID, x.Label, x.CreatedAt = int64(c), "IBAN", at
				x.Bank.IBAN = "DE89" + g.words(2)
				banks = append(banks, x)
			default:
				var x pmWallet
				x.CustomerID, x.Label, x.CreatedAt = int64(c), "Wallet", at
				x.Wallet.Provider = g.pick([]string{"paypal", "applepay"})
				wallets = append(wallets, x)
			}
		}
	}
	e.step()

	byCustomer := mongo.IndexModel{Keys: bson.D{{Key: "customerId", Value: 1}, {Key: "createdAt", Value: -1}}}
	naive := map[string]*mongo.Collection{"card": e.coll("naive_cards"), "bank": e.coll("naive_banks"), "wallet": e.coll("naive_wallets")}
	for _, c := range naive {
		if _, err := c.Indexes().CreateOne(ctx, byCustomer); err != nil {
			return nil, nil, err
		}
	}
	if _, err := naive["card"].Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "card.expiresAt", Value: 1}}}); err != nil {
		return nil, nil, err
	}
	if err := pmInsertAll(e, naive["card"], cards); err != nil {
		return nil, nil, err
	}
	if err := pmInsertAll(e, naive["bank"], banks); err != nil {
		return nil, nil, err
	}
	if err := pmInsertAll(e, naive["wallet"], wallets); err != nil {
		return nil, nil, err
	}
	pm, err := polymorphic.New(e.coll("paymentMethods"), polymorphic.Config{Field: "type", Indexes: []mongo.IndexModel{byCustomer}})
	if err != nil {
		return nil, nil, err
	}
	vCards, err := polymorphic.Register[pmCard](pm, "card", polymorphic.Index{Keys: bson.D{{Key: "card.expiresAt", Value: 1}}})
	if err != nil {
		return nil, nil, err
	}
	vBanks, err := polymorphic.Register[pmBank](pm, "bank")
	if err != nil {
		return nil, nil, err
	}
	vWallets, err := polymorphic.Register[pmWallet](pm, "wallet")
	if err != nil {
		return nil, nil, err
	}
	if err := pm.EnsureValidator(ctx); err != nil {
		return nil, nil, err
	}
	if err := pm.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	if _, err := vCards.InsertMany(ctx, cards); err != nil {
		return nil, nil, err
	}
	if _, err := vBanks.InsertMany(ctx, banks); err != nil {
		return nil, nil, err
	}
	if _, err := vWallets.InsertMany(ctx, wallets); err != nil {
		return nil, nil, err
	}
	e.step()

	reads := e.n(200, 10)
	who := make([]int64, reads+warmup)
	for i := range who {
		who[i] = int64(g.intn(customers))
	}
	byCust := func(i int) bson.D { return bson.D{{Key: "customerId", Value: who[i]}} }
	naiveList, err := e.read(reads, func(i int) error {
		for _, k := range []string{"card", "bank", "wallet"} {
			if err := pmFindAll(e, naive[k], byCust(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	patList, err := e.read(reads, func(i int) error {
		_, err := pm.Find(ctx, byCust(i))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	soon := bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: t0.AddDate(0, 1, 0)}}}}
	naiveExp, err := e.read(reads, func(int) error { return pmFindAll(e, naive["card"], soon) })
	if err != nil {
		return nil, nil, err
	}
	patExp, err := e.read(reads, func(int) error { _, err := vCards.Find(ctx, soon); return err })
	if err != nil {
		return nil, nil, err
	}
	e.step()

	writes := e.n(200, 10)
	naiveIns, err := e.run(writes, true, func(i int) error {
		_, err := naive["card"].InsertOne(ctx, cards[i%len(cards)])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patIns, err := e.run(writes, true, func(i int) error {
		_, err := vCards.Insert(ctx, cards[i%len(cards)])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_cards", "naive_banks", "naive_wallets")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("paymentMethods")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("list a customer's methods", naiveList, patList)...)
	ms = append(ms, readMetrics("cards expiring this month", naiveExp, patExp)...)
	ms = append(ms, writeMetrics("add a card (validated)", naiveIns, patIns)...)
	ms = append(ms, Metric{Name: "collections", Kind: KindStorage, Unit: "collections", Better: Lower, Naive: 3, Pattern: 1})
	ms = append(ms, Metric{Name: "indexes", Kind: KindStorage, Unit: "indexes", Better: Lower, Naive: float64(nStore.Indexes), Pattern: float64(pStore.Indexes)})
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("list a customer's methods", naiveList.opStats, patList.opStats),
		latency("add a card (validated)", naiveIns, patIns),
	}, nil
}

// pmInsertAll inserts docs into coll in one insertMany.
func pmInsertAll[T any](e *env, coll *mongo.Collection, docs []T) error {
	if len(docs) == 0 {
		return nil
	}
	all := make([]any, len(docs))
	for i, d := range docs {
		all[i] = d
	}
	_, err := coll.InsertMany(e.ctx, all)
	return err
}

// pmFindAll runs find(filter) on coll and reads every result.
func pmFindAll(e *env, coll *mongo.Collection, filter bson.D) error {
	cur, err := coll.Find(e.ctx, filter)
	if err != nil {
		return err
	}
	var out []bson.Raw
	return cur.All(e.ctx, &out)
}
