package engine_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
)

// Sizes of the transfer test.
const (
	txnAccounts  = 8
	txnWorkers   = 16
	txnTransfers = 60 // per worker
	txnStartBal  = 1000
)

// TestTxnTransfersKeepSum runs 16 goroutines moving money between 8
// accounts in transactions (each also counts its transfer on both
// accounts), while readers sum the balances in snapshot transactions.
// Every snapshot must show the initial total (no dirty or partial read),
// and at the end the transfer counters must account for every committed
// transfer (no lost update).
func TestTxnTransfersKeepSum(t *testing.T) {
	_, db := newDB(t)
	// Conflicting transfers retry: under the race detector on a busy
	// machine this takes longer than ctxT allows.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	acct := db.Collection("acct")
	var seed []any
	for i := 0; i < txnAccounts; i++ {
		seed = append(seed, bson.D{{Key: "_id", Value: i}, {Key: "bal", Value: txnStartBal}, {Key: "n", Value: 0}})
	}
	if _, err := acct.InsertMany(ctx, seed); err != nil {
		t.Fatal(err)
	}
	const total = txnAccounts * txnStartBal
	var committed, snapshots atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, txnWorkers+4)
	for w := 0; w < txnWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess, err := db.Client().StartSession()
			if err != nil {
				errs <- err
				return
			}
			defer sess.EndSession(ctx)
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < txnTransfers; i++ {
				from := r.IntN(txnAccounts)
				to := (from + 1 + r.IntN(txnAccounts-1)) % txnAccounts
				amt := 1 + r.IntN(20)
				_, err := sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
					var a bson.M
					if err := acct.FindOne(sc, bson.D{{Key: "_id", Value: from}}).Decode(&a); err != nil {
						return nil, err
					}
					if _, err := acct.UpdateOne(sc, bson.D{{Key: "_id", Value: from}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: -amt}, {Key: "n", Value: 1}}}}); err != nil {
						return nil, err
					}
					_, err := acct.UpdateOne(sc, bson.D{{Key: "_id", Value: to}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: amt}, {Key: "n", Value: 1}}}})
					return nil, err
				})
				if err != nil {
					errs <- err
					return
				}
				committed.Add(1)
			}
		}()
	}
	var rg sync.WaitGroup
	for rd := 0; rd < 2; rd++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			sess, err := db.Client().StartSession()
			if err != nil {
				errs <- err
				return
			}
			defer sess.EndSession(ctx)
			topts := options.Transaction().SetReadConcern(readconcern.Snapshot())
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
					// Read the accounts one at a time, so that commits land
					// between the reads.
					sum := 0
					for i := 0; i < txnAccounts; i++ {
						var a struct{ Bal int }
						if err := acct.FindOne(sc, bson.D{{Key: "_id", Value: i}}).Decode(&a); err != nil {
							return nil, err
						}
						sum += a.Bal
					}
					if sum != total {
						t.Errorf("snapshot sum = %d, want %d", sum, total)
					}
					return nil, nil
				}, topts)
				if err != nil {
					errs <- err
					return
				}
				snapshots.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	cur, err := acct.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var all []struct{ Bal, N int }
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	sum, n := 0, 0
	for _, a := range all {
		sum += a.Bal
		n += a.N
	}
	if sum != total {
		t.Fatalf("final sum = %d, want %d", sum, total)
	}
	if int64(n) != 2*committed.Load() || committed.Load() != txnWorkers*txnTransfers {
		t.Fatalf("transfer counters = %d for %d committed transfers: an update was lost", n, committed.Load())
	}
	t.Logf("%d transfers committed, %d snapshot reads checked", committed.Load(), snapshots.Load())
}

var _ = mongo.ErrNoDocuments
