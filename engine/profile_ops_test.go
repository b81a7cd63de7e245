package engine_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestProfilerEveryOperation checks that level 2 profiles every operation
// type with the fields the manual lists for it
// (https://www.mongodb.com/docs/v7.0/reference/database-profiler/): op,
// ns, command, the examined counts and planSummary where a plan ran,
// nreturned for reads, the write counts, responseLength, numYield,
// millis, ts, client, appName, user, and errCode/errName on a failure.
func TestProfilerEveryOperation(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("po")
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}, bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.D
	if err := cur.All(context.Background(), &all); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "a", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOneAndUpdate(ctx, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	acur, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 1}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := acur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "po"}}).Err(); err != nil {
		t.Fatal(err)
	}
	_ = db.RunCommand(ctx, bson.D{{Key: "find", Value: "po"}, {Key: "filter", Value: bson.D{{Key: "$bad", Value: 1}}}}).Err()
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	pc, err := db.Collection("system.profile").Find(ctx, bson.D{{Key: "ns", Value: bson.D{{Key: "$ne", Value: db.Name() + ".system.profile"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var entries []bson.D
	if err := pc.All(ctx, &entries); err != nil {
		t.Fatal(err)
	}
	byOp := map[string][]bson.D{}
	for _, e := range entries {
		op, _ := lookup(e, "op").(string)
		byOp[op] = append(byOp[op], e)
	}
	common := []string{"op", "ns", "command", "numYield", "millis", "ts", "client", "user"}
	want := map[string][]string{
		"insert":  {"ninserted", "responseLength"},
		"query":   {"keysExamined", "docsExamined", "nreturned", "planSummary", "cursorid", "responseLength"},
		"getmore": {"keysExamined", "docsExamined", "nreturned", "planSummary", "originatingCommand", "cursorid", "responseLength"},
		"update":  {"keysExamined", "docsExamined", "nMatched", "nModified", "planSummary"},
		"remove":  {"keysExamined", "docsExamined", "ndeleted", "planSummary"},
		"command": {"responseLength"},
	}
	for op, fields := range want {
		es := byOp[op]
		if len(es) == 0 {
			t.Errorf("no %q entry among %v", op, entries)
			continue
		}
		for _, f := range append(common, fields...) {
			found := false
			for _, e := range es {
				if lookup(e, f) != nil {
					found = true
				}
			}
			if !found {
				t.Errorf("%s entry without %s: %v", op, f, es[0])
			}
		}
	}
	var failed bson.D
	for _, e := range byOp["query"] {
		if lookup(e, "errCode") != nil {
			failed = e
		}
	}
	if failed == nil || lookup(failed, "errName") != "BadValue" || lookup(failed, "errCode") != int32(2) {
		t.Errorf("failed find entry %v", failed)
	}
	cmds := map[string]bool{}
	for _, e := range byOp["command"] {
		cmd, _ := lookup(e, "command").(bson.D)
		if len(cmd) > 0 {
			cmds[cmd[0].Key] = true
		}
	}
	for _, name := range []string{"findAndModify", "aggregate", "count"} {
		if !cmds[name] {
			t.Errorf("no command entry for %s: %v", name, cmds)
		}
	}
}
