package lab

import (
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/bucket"
)

// bucketScenario: a broker's trades. A customer's page shows their
// newest 50 trades. Naive: one document per trade, indexed by
// {owner: 1, at: -1}. Bucket: trades grouped 50 to a document, so the
// page is one bucket (two when it ends in the open one); the price is
// that every trade recorded rewrites its growing bucket.
var bucketScenario = scenario{
	pattern: "bucket",
	title:   "trades: a customer's page shows their newest 50 trades",
	steps:   5,
	run:     runBucket,
}

// bucketSize is the number of trades per bucket and per page.
const bucketSize = 50

// trade is one element of the bucket form, and (with owner and at) one
// document of the naive form.
type trade struct {
	ID     string    `bson:"id"`
	At     time.Time `bson:"at"`
	Ticker string    `bson:"ticker"`
	Side   string    `bson:"side"`
	Qty    int       `bson:"qty"`
	Price  float64   `bson:"price"`
}

// flatTrade is a trade of the naive form.
type flatTrade struct {
	Owner int   `bson:"owner"`
	Trade trade `bson:",inline"`
}

// runBucket generates the scenario's data, loads it in both forms and
// measures them.
func runBucket(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	owners := e.n(100, 3)
	tickers := []string{"MDB", "AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA", "META"}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := 0
	mk := func(at time.Time) trade {
		seq++
		return trade{ID: fmt.Sprintf("t%d", seq), At: at, Ticker: g.pick(tickers), Side: g.pick([]string{"buy", "sell"}),
			Qty: 1 + g.heavy(1, 1.2, 10000), Price: float64(g.intn(100000)) / 100}
	}
	// Trades per customer are heavy-tailed: most trade a little, a few
	// trade all day.
	history := make([][]trade, owners)
	for o := range history {
		n := g.heavy(10, 1.1, e.n(5000, 100))
		for i := range n {
			history[o] = append(history[o], mk(t0.Add(time.Duration(i)*time.Minute)))
		}
	}
	e.step()

	nTrades := e.coll("naive_trades")
	if _, err := nTrades.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "owner", Value: 1}, {Key: "at", Value: -1}}}); err != nil {
		return nil, nil, err
	}
	var docs []any
	for o, ts := range history {
		for _, t := range ts {
			docs = append(docs, flatTrade{Owner: o, Trade: t})
		}
	}
	if _, err := nTrades.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	// The bucket clock follows the trades' own times, so openedAt is the
	// time of a bucket's first trade, as in production.
	clock := t0
	s, err := bucket.New[trade](e.coll("trades"), bucket.Config{Size: bucketSize, Clock: func() time.Time { return clock }})
	if err != nil {
		return nil, nil, err
	}
	if err := s.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	for o, ts := range history {
		for i := 0; i < len(ts); i += bucketSize {
			batch := ts[i:min(i+bucketSize, len(ts))]
			clock = batch[0].At
			if _, err := s.AppendMany(ctx, o, batch); err != nil {
				return nil, nil, err
			}
		}
	}
	e.step()

	pop := g.zipf(owners, 1.1)
	reads := e.n(400, 20)
	who := make([]int, reads+warmup)
	for i := range who {
		who[i] = pop()
	}
	naiveRead, err := e.read(reads, func(i int) error {
		cur, err := nTrades.Find(ctx, bson.D{{Key: "owner", Value: who[i]}},
			options.Find().SetSort(bson.D{{Key: "at", Value: -1}}).SetLimit(bucketSize))
		if err != nil {
			return err
		}
		var ts []flatTrade
		return cur.All(ctx, &ts)
	})
	if err != nil {
		return nil, nil, err
	}
	patRead, err := e.read(reads, func(i int) error {
		_, err := s.Page(ctx, who[i], bucket.Cursor{})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	writes := e.n(300, 10)
	fresh := make([]flatTrade, writes+warmup)
	now := t0.Add(365 * 24 * time.Hour)
	for i := range fresh {
		fresh[i] = flatTrade{Owner: pop(), Trade: mk(now.Add(time.Duration(i) * time.Second))}
	}
	naiveAdd, err := e.run(writes, true, func(i int) error {
		_, err := nTrades.InsertOne(ctx, fresh[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patAdd, err := e.run(writes, true, func(i int) error {
		clock = fresh[i].Trade.At
		_, err := s.Append(ctx, fresh[i].Owner, fresh[i].Trade)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	// What each recorded trade rewrites: the naive form writes the trade's
	// own document; the bucket form rewrites its whole open bucket. The
	// sizes come from $bsonSize, read after the timed run.
	rewritten, err := bucketRewrite(e, s, fresh[:writes], &clock)
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_trades")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("trades")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("newest 50 trades", naiveRead, patRead)...)
	ms = append(ms, writeMetrics("record a trade", naiveAdd, patAdd)...)
	ms = append(ms, Metric{Name: "record a trade: document size rewritten", Kind: KindWrite, Unit: "bytes", Better: Lower,
		Naive: float64(nStore.DataSize) / float64(max(nStore.Count, 1)), Pattern: rewritten})
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("newest 50 trades", naiveRead.opStats, patRead.opStats),
		latency("record a trade", naiveAdd, patAdd),
	}, nil
}

// bucketRewrite appends the trades again, untimed and unmonitored, and
// returns the mean $bsonSize of the bucket each append rewrote.
func bucketRewrite(e *env, s *bucket.Store[trade], ts []flatTrade, clock *time.Time) (float64, error) {
	coll := s.Collection()
	var total float64
	for _, t := range ts {
		t.Trade.ID += "r" // a new trade, found again by its id below
		*clock = t.Trade.At
		if _, err := s.Append(e.ctx, t.Owner, t.Trade); err != nil {
			return 0, err
		}
		cur, err := coll.Aggregate(e.ctx, mongo.Pipeline{
			{{Key: "$match", Value: bson.D{{Key: "owner", Value: t.Owner}, {Key: "elements.id", Value: t.Trade.ID}}}},
			{{Key: "$project", Value: bson.D{{Key: "size", Value: bson.D{{Key: "$bsonSize", Value: "$$ROOT"}}}}}},
		})
		if err != nil {
			return 0, err
		}
		var out []struct {
			Size int64 `bson:"size"`
		}
		if err := cur.All(e.ctx, &out); err != nil {
			return 0, err
		}
		if len(out) > 0 {
			total += float64(out[0].Size)
		}
	}
	return total / float64(max(len(ts), 1)), nil
}
