package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// TestAggregateMatchAfterLookup checks that a $match after a $lookup
// that reads no field the $lookup writes runs in the $cursor stage on
// an index (IDHACK or IXSCAN), as mongod's pushMatchBefore makes it, with the same results;
// a $match on the "as" field stays after the $lookup.
func TestAggregateMatchAfterLookup(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seedN(t, c, 50)
	o := db.Collection("o")
	if _, err := o.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 5}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 5}},
	}); err != nil {
		t.Fatal(err)
	}
	lookup := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "o"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: "j"}}}}
	run := func(p bson.A) []bson.Raw {
		cur, err := c.Aggregate(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	explain := func(p bson.A) explaintest.Result {
		return explaintest.Run(t, db, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: p}, {Key: "cursor", Value: bson.D{}}})
	}

	moved := bson.A{lookup, bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: 15}}}}}
	got := run(moved)
	if len(got) != 1 || got[0].Lookup("_id").AsInt64() != 15 {
		t.Fatalf("results %v", got)
	}
	if js, _ := got[0].Lookup("j").Array().Values(); len(js) != 2 {
		t.Errorf("j = %v, want both o documents", got[0].Lookup("j"))
	}
	ex := explain(moved)
	// mongod answers an equality on _id with IDHACK here too.
	if !ex.HasStage("IDHACK") {
		t.Errorf("$match on _id after $lookup: plan %v, want IDHACK", ex)
	}
	if n := ex.DocsExamined(); n != 1 {
		t.Errorf("$cursor examined %d documents, want 1", n)
	}
	if f := ex.Reply().Lookup("stages", "0", "$cursor", "queryPlanner", "parsedQuery"); f.Type == 0 {
		t.Errorf("no parsedQuery in $cursor: %v", ex.Reply())
	}

	// Split: the clause on _id moves, the one on j stays.
	split := bson.A{lookup, bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 10}}}, {Key: "j", Value: bson.D{{Key: "$size", Value: 2}}}}}}}
	if got := run(split); len(got) != 1 || got[0].Lookup("_id").AsInt64() != 5 {
		t.Errorf("split match results %v, want _id 5", got)
	}
	ex = explain(split)
	if !ex.Uses("_id_") {
		t.Errorf("split $match: plan %v, want a scan of _id_", ex)
	}
	if !lastStageIs(ex.Reply(), "$match") {
		t.Errorf("split $match: the clause on j does not stay after $lookup: %v", ex.Reply())
	}

	// Not moved: a match on the "as" field, and on a field $addFields computes.
	for _, p := range []bson.A{
		{lookup, bson.D{{Key: "$match", Value: bson.D{{Key: "j._id", Value: 1}}}}},
		{lookup, bson.D{{Key: "$addFields", Value: bson.D{{Key: "_id", Value: "$b"}}}}, bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: 15}}}}},
	} {
		ex := explain(p)
		if ex.HasStage("IDHACK") || !lastStageIs(ex.Reply(), "$match") {
			t.Errorf("%v: the $match moved: %v", p, ex.Reply())
		}
	}
	if got := run(bson.A{lookup, bson.D{{Key: "$match", Value: bson.D{{Key: "j._id", Value: 1}}}}}); len(got) != 5 {
		t.Errorf("match on j: %d results, want 5", len(got))
	}
}

// lastStageIs reports whether the last entry of an aggregate explain's
// stages is the stage name.
func lastStageIs(reply bson.Raw, name string) bool {
	vals, err := reply.Lookup("stages").Array().Values()
	if err != nil || len(vals) == 0 {
		return false
	}
	_, err = vals[len(vals)-1].Document().LookupErr(name)
	return err == nil
}
