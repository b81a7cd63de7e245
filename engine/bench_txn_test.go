package engine_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// BenchmarkTxnCommit measures committed transactions per second from 1
// and 16 clients, in memory and on disk. Each transaction moves an amount
// between two accounts of its own client (two updates and a commit), so
// that clients do not conflict and the figure is the commit path's.
func BenchmarkTxnCommit(b *testing.B) {
	for _, durable := range []bool{false, true} {
		for _, clients := range []int{1, 16} {
			name := fmt.Sprintf("storage=%s/clients=%d", storageName(durable), clients)
			b.Run(name, func(b *testing.B) { benchTxnClients(b, durable, clients) })
		}
	}
}

func benchTxnClients(b *testing.B, durable bool, clients int) {
	client := perfEngine(b, durable)
	c := client.Database("bench").Collection("acct")
	ctx := context.Background()
	var seed []any
	for i := 0; i < 2*clients; i++ {
		seed = append(seed, bson.D{{Key: "_id", Value: i}, {Key: "bal", Value: 1000}})
	}
	if _, err := c.InsertMany(ctx, seed); err != nil {
		b.Fatal(err)
	}
	sessions := make([]*mongo.Session, clients)
	for i := range sessions {
		s, err := client.StartSession()
		if err != nil {
			b.Fatal(err)
		}
		defer s.EndSession(ctx)
		sessions[i] = s
	}
	elapsed := runClients(b, clients, func(ctx context.Context, cl, i int) error {
		_, err := sessions[cl].WithTransaction(ctx, func(sc context.Context) (any, error) {
			if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 2 * cl}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: -1}}}}); err != nil {
				return nil, err
			}
			_, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 2*cl + 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: 1}}}})
			return nil, err
		})
		return err
	})
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "commits/s")
	recordPerf(fmt.Sprintf("txn/%s/%d", storageName(durable), clients), rate)
}
