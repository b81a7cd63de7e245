package bucket_test

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
	"github.com/formworkdb/formwork/pattern/bucket"
)

type Trade struct {
	TradeID string `bson:"tradeId"`
	Ticker  string `bson:"ticker"`
	Qty     int    `bson:"qty"`
}

// connect opens an in-memory engine and a client on it.
func connect(ctx context.Context) (*mongo.Client, func()) {
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(db.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	return client, func() { client.Disconnect(ctx); db.Close() }
}

// Trades of one customer go into buckets of three; pages come back newest
// first, one bucket each.
func ExampleNew() {
	ctx := context.Background()
	client, done := connect(ctx)
	defer done()

	minute := 0
	trades, err := bucket.New[Trade](client.Database("shop").Collection("tradeBuckets"), bucket.Config{
		Size: 3, Owner: "customerId", Elements: "trades", ElementID: "tradeId",
		Clock: func() time.Time {
			minute++
			return time.Date(2025, 5, 1, 9, minute, 0, 0, time.UTC)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := trades.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 7; i++ {
		opened, err := trades.Append(ctx, 123, Trade{TradeID: fmt.Sprintf("t%d", i), Ticker: "MDB", Qty: 10 * i})
		if err != nil {
			log.Fatal(err)
		}
		if opened {
			fmt.Printf("t%d opened a bucket\n", i)
		}
	}
	var cur bucket.Cursor
	for {
		page, err := trades.Page(ctx, 123, cur)
		if err != nil {
			log.Fatal(err)
		}
		if len(page.Buckets) == 0 {
			break
		}
		fmt.Print("page opened ", page.Buckets[0].OpenedAt.Format("15:04"), ":")
		for _, t := range page.Elements {
			fmt.Print(" ", t.TradeID)
		}
		fmt.Println()
		cur = page.Next
	}

	// Correct one trade in place.
	if err := trades.Update(ctx, 123, "t5", bson.D{{Key: "qty", Value: 45}}); err != nil {
		log.Fatal(err)
	}
	t5, in, err := trades.Find(ctx, 123, "t5")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("t5 qty %d, in the bucket opened %s holding %d\n", t5.Qty, in.OpenedAt.Format("15:04"), in.Count)
	// Output:
	// t1 opened a bucket
	// t4 opened a bucket
	// t7 opened a bucket
	// page opened 09:07: t7
	// page opened 09:04: t4 t5 t6
	// page opened 09:01: t1 t2 t3
	// t5 qty 45, in the bucket opened 09:04 holding 3
}

// The document as stored: the owner comes from the upsert filter, count
// from $inc, openedAt from $setOnInsert.
func ExampleStore_Append() {
	ctx := context.Background()
	client, done := connect(ctx)
	defer done()
	coll := client.Database("shop").Collection("readings")

	s, err := bucket.New[int](coll, bucket.Config{
		Size:  50,
		Clock: func() time.Time { return time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []int{17, 18, 21} {
		if _, err := s.Append(ctx, "sensor-1", v); err != nil {
			log.Fatal(err)
		}
	}
	var doc bson.D
	if err := coll.FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 0}})).Decode(&doc); err != nil {
		log.Fatal(err)
	}
	for _, e := range doc {
		fmt.Printf("%s: %v\n", e.Key, e.Value)
	}
	// Output:
	// owner: sensor-1
	// count: 3
	// elements: [17 18 21]
	// openedAt: 1746057600000
}

// Price ticks loaded from history: each bucket carries the bounds of its
// ticks' own times, and a time range reads only the buckets overlapping
// it, through the time index.
func ExampleStore_Range() {
	ctx := context.Background()
	client, done := connect(ctx)
	defer done()

	type Tick struct {
		At time.Time `bson:"at"`
		Px float64   `bson:"px"`
	}
	ticks, err := bucket.New[Tick](client.Database("shop").Collection("ticks"), bucket.Config{
		Size: 4, Owner: "symbol", Time: "at",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := ticks.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	start := time.Date(2019, 3, 1, 9, 0, 0, 0, time.UTC)
	batch := make([]Tick, 4)
	for i := range 12 { // three buckets of four, one tick a minute
		batch[i%4] = Tick{At: start.Add(time.Duration(i) * time.Minute), Px: 100 + float64(i)}
		if i%4 == 3 {
			if _, err := ticks.AppendMany(ctx, "MDB", batch); err != nil {
				log.Fatal(err)
			}
		}
	}
	infos, err := ticks.Buckets(ctx, "MDB")
	if err != nil {
		log.Fatal(err)
	}
	for _, in := range infos {
		fmt.Println("bucket", in.MinTime.Format("15:04"), "to", in.MaxTime.Format("15:04"), "opened", in.OpenedAt.Format("2006-01-02 15:04"))
	}
	got, err := ticks.Range(ctx, "MDB", start.Add(3*time.Minute), start.Add(6*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range got {
		fmt.Println(t.At.Format("15:04"), t.Px)
	}
	// Output:
	// bucket 09:08 to 09:11 opened 2019-03-01 09:08
	// bucket 09:04 to 09:07 opened 2019-03-01 09:04
	// bucket 09:00 to 09:03 opened 2019-03-01 09:00
	// 09:03 103
	// 09:04 104
	// 09:05 105
}

// A refund removes one trade from its bucket; count follows in the same
// update.
func ExampleStore_Remove() {
	ctx := context.Background()
	client, done := connect(ctx)
	defer done()

	trades, err := bucket.New[Trade](client.Database("shop").Collection("tradeBuckets"), bucket.Config{
		Size: 10, Owner: "customerId", Elements: "trades", ElementID: "tradeId",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := trades.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		if _, err := trades.Append(ctx, 123, Trade{TradeID: id, Ticker: "MDB", Qty: 1}); err != nil {
			log.Fatal(err)
		}
	}
	if err := trades.Remove(ctx, 123, "t2"); err != nil {
		log.Fatal(err)
	}
	err = trades.Remove(ctx, 123, "t2")
	fmt.Println("again:", errors.Is(err, bucket.ErrNotFound))
	all, err := trades.All(ctx, 123)
	if err != nil {
		log.Fatal(err)
	}
	infos, err := trades.Buckets(ctx, 123)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(all), "trades, count", infos[0].Count)
	// Output:
	// again: true
	// 2 trades, count 2
}
