package engine_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestCursorKilledWithWhatItReads checks, as mongod's
// getmore_invalidated_cursors.js does, that a getMore after the cursor's
// collection is dropped or renamed, its database dropped, or the index its
// plan scans dropped answers QueryPlanKilled (175) with mongod's reason;
// dropping an index the plan does not use changes nothing, and a killed
// cursor answers CursorNotFound (43).
func TestCursorKilledWithWhatItReads(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	setup := func(name string) *mongo.Collection {
		c := client.Database(name).Collection("test")
		_ = c.Drop(ctx)
		docs := make([]any, 10)
		for i := range docs {
			docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "x", Value: i}}
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// open runs find with batchSize 2 and returns the cursor id.
	open := func(c *mongo.Collection, hint any) int64 {
		cmd := bson.D{{Key: "find", Value: c.Name()}, {Key: "batchSize", Value: 2}}
		if hint != nil {
			cmd = append(cmd, bson.E{Key: "hint", Value: hint})
		}
		var res struct {
			Cursor struct{ ID int64 } `bson:"cursor"`
		}
		if err := c.Database().RunCommand(ctx, cmd).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if res.Cursor.ID == 0 {
			t.Fatal("no cursor")
		}
		return res.Cursor.ID
	}
	getMore := func(c *mongo.Collection, id int64) (int, error) {
		var res struct {
			Cursor struct{ NextBatch []bson.Raw } `bson:"cursor"`
		}
		// No deadline: the driver would send one as maxTimeMS, which
		// getMore refuses on these cursors.
		err := c.Database().RunCommand(context.Background(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: c.Name()}}).Decode(&res)
		return len(res.Cursor.NextBatch), err
	}
	wantKilled := func(c *mongo.Collection, id int64, reason string) {
		t.Helper()
		_, err := getMore(c, id)
		wantCode(t, err, 175, "QueryPlanKilled")
		if !strings.Contains(err.Error(), reason) {
			t.Fatalf("error %v does not say %q", err, reason)
		}
		// The killed cursor is gone.
		_, err = getMore(c, id)
		wantCode(t, err, 43, "CursorNotFound")
	}

	c := setup("gic1")
	id := open(c, nil)
	if err := c.Database().Drop(ctx); err != nil {
		t.Fatal(err)
	}
	wantKilled(c, id, "collection dropped")

	c = setup("gic2")
	id = open(c, nil)
	if err := c.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	wantKilled(c, id, "collection dropped")

	c = setup("gic3")
	id = open(c, nil)
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "gic3.test"}, {Key: "to", Value: "gic3.renamed"}}).Err(); err != nil {
		t.Fatal(err)
	}
	wantKilled(c, id, "collection renamed")

	c = setup("gic4")
	id = open(c, bson.D{{Key: "x", Value: 1}})
	if err := c.Indexes().DropOne(ctx, "x_1"); err != nil {
		t.Fatal(err)
	}
	wantKilled(c, id, "index 'x_1' dropped")

	// An index the plan does not scan may go.
	c = setup("gic5")
	id = open(c, nil)
	if err := c.Indexes().DropOne(ctx, "x_1"); err != nil {
		t.Fatal(err)
	}
	if n, err := getMore(c, id); err != nil || n != 8 {
		t.Fatalf("getMore after dropping an unused index: %d documents, %v", n, err)
	}

	// A collection dropped and created again is another collection.
	c = setup("gic6")
	id = open(c, nil)
	c = setup("gic6")
	wantKilled(c, id, "collection dropped")
}

// TestGetMoreMaxTimeMS checks that getMore refuses maxTimeMS on a cursor
// that is not awaitData (BadValue), as
// jstests/core/query/getmore/getmore_cmd_maxtimems.js expects, and that
// the cursor stays usable.
func TestGetMoreMaxTimeMS(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("gm")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Cursor struct{ ID int64 } `bson:"cursor"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "gm"}, {Key: "batchSize", Value: 1}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "getMore", Value: res.Cursor.ID}, {Key: "collection", Value: "gm"}, {Key: "maxTimeMS", Value: 100}}).Err()
	wantCode(t, err, 2, "BadValue")
	// Without a deadline: the driver would send one as maxTimeMS.
	if err := db.RunCommand(context.Background(), bson.D{{Key: "getMore", Value: res.Cursor.ID}, {Key: "collection", Value: "gm"}}).Err(); err != nil {
		t.Fatalf("getMore after the refused one: %v", err)
	}
}
