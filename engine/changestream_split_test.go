package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// nextBig returns the stream's next event, waiting long enough for events
// of tens of megabytes under the race detector.
func nextBig(t *testing.T, cs *mongo.ChangeStream) bson.M {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if !cs.Next(ctx) {
		t.Fatalf("no event: %v", cs.Err())
	}
	return asM(t, cs.Current)
}

// splitStage is {$changeStreamSplitLargeEvent: {}}.
var splitStage = bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}

// TestChangeStreamSplitLargeEvent follows mongod's own test of the stage:
// an update with its pre- and post-images (three 10 MB fields) comes as
// three fragments, each with its own token, resumable from any of them;
// a stream without the stage fails with BSONObjectTooLarge, one without
// the images needs no split.
func TestChangeStreamSplitLargeEvent(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx, cancelAll := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancelAll()
	c := db.Collection("big")
	big := strings.Repeat("x", 10<<20)
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "aaa"}, {Key: "a", Value: big}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "big"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	plain := mustWatch(t, c, nil, options.ChangeStream().SetMaxAwaitTime(100*time.Millisecond))
	start := plain.ResumeToken()
	images := func() *options.ChangeStreamOptionsBuilder {
		return options.ChangeStream().SetFullDocument(options.Required).SetFullDocumentBeforeChange(options.Required).SetMaxAwaitTime(100 * time.Millisecond)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "aaa"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: strings.Repeat("y", 10<<20)}}}}); err != nil {
		t.Fatal(err)
	}

	// Without images the event is small enough.
	ev := nextBig(t, plain)
	if ev["documentKey"].(bson.M)["_id"] != "aaa" || ev["splitEvent"] != nil {
		t.Fatalf("plain event %v", ev["splitEvent"])
	}

	// With them and no split stage: BSONObjectTooLarge.
	// The event is read for the first batch, so the aggregate fails (or,
	// were it not read yet, the getMore).
	tooBig, err := c.Watch(ctx, mongo.Pipeline{}, images().SetResumeAfter(start))
	if err == nil {
		ctx2, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if tooBig.Next(ctx2) {
			t.Fatal("an event over 16 MB came whole")
		}
		err = tooBig.Err()
		tooBig.Close(ctx)
	}
	wantCode(t, err, 10334, "BSONObjectTooLarge")

	// With the stage: three fragments that add up to the event.
	cs := mustWatch(t, c, mongo.Pipeline{splitStage}, images().SetResumeAfter(start))
	var tokens []bson.Raw
	whole := bson.M{}
	for n := int32(1); n <= 3; n++ {
		ev := nextBig(t, cs)
		se, _ := ev["splitEvent"].(bson.M)
		if se["fragment"] != n || se["of"] != int32(3) {
			t.Fatalf("fragment %d: splitEvent %v", n, se)
		}
		tokens = append(tokens, cs.Current.Lookup("_id").Document())
		for k, v := range ev {
			if k != "_id" && k != "splitEvent" {
				whole[k] = v
			}
		}
	}
	if whole["operationType"] != "update" || len(whole["fullDocument"].(bson.M)["a"].(string)) != 10<<20 ||
		len(whole["fullDocumentBeforeChange"].(bson.M)["a"].(string)) != 10<<20 ||
		len(whole["updateDescription"].(bson.M)["updatedFields"].(bson.M)["a"].(string)) != 10<<20 {
		t.Fatalf("reassembled event is incomplete: %v", whole["operationType"])
	}
	if bytesEqual(tokens[0], tokens[1]) || bytesEqual(tokens[1], tokens[2]) {
		t.Fatal("fragments share a resume token")
	}

	// Resuming from the second fragment gives the third only.
	resumed := mustWatch(t, c, mongo.Pipeline{splitStage}, images().SetResumeAfter(tokens[1]))
	ev = nextBig(t, resumed)
	if se := ev["splitEvent"].(bson.M); se["fragment"] != int32(3) || se["of"] != int32(3) {
		t.Fatalf("resumed after fragment 2: %v", se)
	}
	if _, ok := ev["updateDescription"]; !ok && ev["fullDocument"] == nil && ev["fullDocumentBeforeChange"] == nil {
		t.Fatalf("resumed fragment holds no large field")
	}

	// Resuming from the last fragment starts at the next event.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "ccc"}}); err != nil {
		t.Fatal(err)
	}
	after := mustWatch(t, c, mongo.Pipeline{splitStage}, images().SetResumeAfter(tokens[2]))
	ev = nextBig(t, after)
	if ev["operationType"] != "insert" || ev["documentKey"].(bson.M)["_id"] != "ccc" || ev["splitEvent"] != nil {
		t.Fatalf("resumed after the last fragment: %v", ev)
	}

	// A pipeline that changes the split cannot resume from a fragment.
	proj := bson.D{{Key: "$project", Value: bson.D{{Key: "fullDocument.a", Value: 0}}}}
	bad, err := c.Watch(ctx, mongo.Pipeline{proj, splitStage}, images().SetResumeAfter(tokens[2]))
	if err == nil {
		ctx3, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel3()
		if bad.Next(ctx3) {
			t.Fatalf("resumed with another split: %v", bad.Current)
		}
		err = bad.Err()
		bad.Close(ctx)
	}
	wantCode(t, err, 280, "ChangeStreamFatalError")
}

// bytesEqual compares two raw documents.
func bytesEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// TestChangeStreamSplitLargeEventPosition checks mongod's rules on where
// the stage may be.
func TestChangeStreamSplitLargeEventPosition(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	agg := func(pipeline ...bson.D) error {
		return db.RunCommand(ctx, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}).Err()
	}
	cs := bson.D{{Key: "$changeStream", Value: bson.D{}}}
	wantCode(t, agg(splitStage), 20, "IllegalOperation")
	wantCode(t, agg(cs, splitStage, splitStage), 7182802, "")
	wantCode(t, agg(cs, splitStage, bson.D{{Key: "$project", Value: bson.D{{Key: "fullDocument", Value: 0}}}}), 7182802, "")
	wantCode(t, agg(cs, bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{{Key: "x", Value: 1}}}}), 7182800, "")
	if err := agg(cs, bson.D{{Key: "$match", Value: bson.D{}}}, splitStage); err != nil {
		t.Fatal(err)
	}
}
