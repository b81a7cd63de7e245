package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

func TestDataSurvivesCloseAndReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	db, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	client, err := testenv.Connect(db)
	if err != nil {
		t.Fatal(err)
	}
	c := client.Database("d").Collection("c")
	seed(t, c, 100)
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "$set", Value: bson.D{{Key: "changed", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 6}}); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("d").CreateCollection(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	client.Disconnect(ctx)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	client, err = testenv.Connect(db)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	c = client.Database("d").Collection("c")
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 99 {
		t.Fatalf("count after reopen = %d", n)
	}
	var doc bson.M
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 5}}).Decode(&doc); err != nil || doc["changed"] != true {
		t.Fatalf("doc 5 = %v %v", doc, err)
	}
	names, _ := client.Database("d").ListCollectionNames(ctx, bson.D{})
	if len(names) != 2 {
		t.Fatalf("collections after reopen = %v", names)
	}
	// New inserts must not reuse record ids of existing documents.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1000}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 100 {
		t.Fatalf("count after new insert = %d", n)
	}
}

// TestDataSurvivesKilledProcess writes from a child process that exits
// without closing the engine, as a kill would, then reads the data back.
func TestDataSurvivesKilledProcess(t *testing.T) {
	if dir := os.Getenv("FORMWORK_CRASH_DIR"); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDataSurvivesKilledProcess$")
	cmd.Env = append(os.Environ(), "FORMWORK_CRASH_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 42 {
		t.Fatalf("child exited %d (%v): %s", code, err, out)
	}
	ctx := ctxT(t)
	db, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	client, err := testenv.Connect(db)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	n, err := client.Database("d").Collection("c").CountDocuments(ctx, bson.D{})
	if err != nil || n != 500 {
		t.Fatalf("count after crash = %d %v", n, err)
	}
}

func crashChild(dir string) {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	client, err := testenv.Connect(db)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	c := client.Database("d").Collection("c")
	for i := 0; i < 500; i++ {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	os.Exit(42) // no Close: every acknowledged write must already be durable
}
