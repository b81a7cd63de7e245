package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// Sizes of the transaction crash test.
const (
	txnCrashWriters  = 8
	txnCrashAccounts = 10
	txnCrashCommits  = 400
)

// TestTxnSurvivesSIGKILL runs durable transfer transactions in a child
// process (each moves an amount between two accounts, counts itself on
// both and inserts a receipt), printing each acknowledged commit. The
// parent kills the child with SIGKILL in mid-stream, reopens the database
// and checks that every acknowledged transaction is there (its receipt),
// that no partial transaction is visible (the balances keep their sum and
// the transfer counters match the receipts), and that validate passes.
func TestTxnSurvivesSIGKILL(t *testing.T) {
	if dir := os.Getenv("FORMWORK_TXN_CRASH_DIR"); dir != "" {
		txnCrashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	cmd, sc, stderr := startCrashChild(t, "TestTxnSurvivesSIGKILL", "FORMWORK_TXN_CRASH_DIR", dir)
	acked := map[string]bool{}
	deadline := time.Now().Add(2 * time.Minute)
	for len(acked) < txnCrashCommits && sc.Scan() && time.Now().Before(deadline) {
		kind, arg, _ := strings.Cut(sc.Text(), " ")
		if kind != "commit" {
			t.Fatalf("child: %s", sc.Text())
		}
		acked[arg] = true
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		if kind, arg, _ := strings.Cut(sc.Text(), " "); kind == "commit" {
			acked[arg] = true
		}
	}
	cmd.Wait()
	if len(acked) < txnCrashCommits {
		t.Fatalf("child stopped after %d commits: %s", len(acked), stderr.String())
	}

	ctx := ctxT(t)
	_, client := testenv.Engine(t, engine.Options{Dir: dir})
	d := client.Database("bank")
	cur, err := d.Collection("receipts").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	receipts := map[string]bool{}
	for cur.Next(ctx) {
		receipts[cur.Current.Lookup("_id").StringValue()] = true
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	for id := range acked {
		if !receipts[id] {
			t.Errorf("acknowledged transaction %s lost", id)
		}
	}
	cur, err = d.Collection("acct").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var accts []struct{ Bal, N int }
	if err := cur.All(ctx, &accts); err != nil {
		t.Fatal(err)
	}
	sum, n := 0, 0
	for _, a := range accts {
		sum += a.Bal
		n += a.N
	}
	if len(accts) != txnCrashAccounts || sum != txnCrashAccounts*1000 {
		t.Errorf("%d accounts with sum %d after SIGKILL, want %d and %d: a partial transaction", len(accts), sum, txnCrashAccounts, txnCrashAccounts*1000)
	}
	if n != 2*len(receipts) {
		t.Errorf("transfer counters %d for %d receipts: a partial transaction", n, len(receipts))
	}
	for _, name := range []string{"acct", "receipts"} {
		var v struct {
			Valid  bool     `bson:"valid"`
			Errors []string `bson:"errors"`
		}
		if err := d.RunCommand(ctx, bson.D{{Key: "validate", Value: name}, {Key: "full", Value: true}}).Decode(&v); err != nil {
			t.Fatal(err)
		}
		if !v.Valid || len(v.Errors) > 0 {
			t.Errorf("validate %s: %+v", name, v)
		}
	}
	t.Logf("%d acknowledged transactions, %d committed found after SIGKILL", len(acked), len(receipts))
}

// txnCrashChild runs transfer transactions from 8 goroutines until it is
// killed, printing "commit <receipt>" after each acknowledged commit.
func txnCrashChild(dir string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stdout, "error", err)
		os.Exit(1)
	}
	db, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		fail(err)
	}
	client, err := testenv.Connect(db)
	if err != nil {
		fail(err)
	}
	d := client.Database("bank")
	acct, receipts := d.Collection("acct"), d.Collection("receipts")
	var seed []any
	for i := 0; i < txnCrashAccounts; i++ {
		seed = append(seed, bson.D{{Key: "_id", Value: i}, {Key: "bal", Value: 1000}, {Key: "n", Value: 0}})
	}
	if _, err := acct.InsertMany(ctx, seed); err != nil {
		fail(err)
	}
	if err := d.CreateCollection(ctx, "receipts"); err != nil {
		fail(err)
	}
	var out sync.Mutex
	for w := 0; w < txnCrashWriters; w++ {
		go func() {
			sess, err := client.StartSession()
			if err != nil {
				fail(err)
			}
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%06d", w, i)
				from := r.IntN(txnCrashAccounts)
				to := (from + 1 + r.IntN(txnCrashAccounts-1)) % txnCrashAccounts
				_, err := sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
					if _, err := acct.UpdateOne(sc, bson.D{{Key: "_id", Value: from}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: -5}, {Key: "n", Value: 1}}}}); err != nil {
						return nil, err
					}
					if _, err := receipts.InsertOne(sc, bson.D{{Key: "_id", Value: id}, {Key: "from", Value: from}, {Key: "to", Value: to}}); err != nil {
						return nil, err
					}
					_, err := acct.UpdateOne(sc, bson.D{{Key: "_id", Value: to}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: 5}, {Key: "n", Value: 1}}}})
					return nil, err
				})
				if err != nil {
					fail(err)
				}
				out.Lock()
				fmt.Fprintf(os.Stdout, "commit %s\n", id)
				out.Unlock()
			}
		}()
	}
	select {} // until killed
}
