package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// csStageNames lists an explain's stages as "$name" or "$changeStream:stage".
func csStageNames(t *testing.T, res bson.M) []string {
	t.Helper()
	stages, ok := res["stages"].(bson.A)
	if !ok {
		t.Fatalf("no stages: %v", res)
	}
	var out []string
	for _, s := range stages {
		for k, v := range s.(bson.M) {
			if k == "nReturned" || k == "executionTimeMillisEstimate" {
				continue
			}
			if k == "$changeStream" {
				k += ":" + v.(bson.M)["stage"].(string)
			}
			out = append(out, k)
		}
	}
	return out
}

// TestChangeStreamExplain explains a change stream at every verbosity,
// with aggregate's explain flag and with the explain command, in mongod
// 7.0's shape: the oplog scan as $cursor, then the stages $changeStream
// stands for, then the user's.
func TestChangeStreamExplain(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	pipeline := bson.A{
		bson.D{{Key: "$changeStream", Value: bson.D{{Key: "fullDocument", Value: "updateLookup"}}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "operationType", Value: "insert"}}}},
	}
	want := []string{"$cursor", "$changeStream:internalUnwindTransaction", "$changeStream:internalTransform",
		"$changeStream:internalCheckInvalidate", "$changeStream:internalCheckResumability",
		"$changeStream:internalAddPostImage", "$match", "$match"}
	check := func(res bson.M, run bool) {
		t.Helper()
		got := csStageNames(t, res)
		if len(got) != len(want) {
			t.Fatalf("stages %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("stages %v, want %v", got, want)
			}
		}
		stages := res["stages"].(bson.A)
		cursor := stages[0].(bson.M)["$cursor"].(bson.M)
		if cursor["queryPlanner"].(bson.M)["namespace"] != "local.oplog.rs" {
			t.Fatalf("$cursor %v", cursor)
		}
		_, hasStats := cursor["executionStats"]
		_, hasN := stages[1].(bson.M)["nReturned"]
		if hasStats != run || hasN != run {
			t.Fatalf("run %v: executionStats %v, nReturned %v", run, hasStats, hasN)
		}
		opts := stages[2].(bson.M)["$changeStream"].(bson.M)["options"].(bson.M)
		if opts["fullDocument"] != "updateLookup" || opts["fullDocumentBeforeChange"] != "off" {
			t.Fatalf("internalTransform options %v", opts)
		}
		if res["explainVersion"] != "1" || res["command"] == nil || res["serverInfo"] == nil {
			t.Fatalf("explain reply %v", res)
		}
	}
	raw, err := db.RunCommand(ctx, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline}, {Key: "explain", Value: true}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	check(asM(t, raw), false)
	for _, verb := range []string{"queryPlanner", "executionStats", "allPlansExecution"} {
		cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}}, {Key: "verbosity", Value: verb}}
		raw, err := db.RunCommand(ctx, cmd).Raw()
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		check(asM(t, raw), verb != "queryPlanner")
	}
	// A stream's rules apply to its explain.
	err = db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}}, {Key: "explain", Value: true}}).Err()
	wantCode(t, err, 73, "InvalidNamespace")
}
