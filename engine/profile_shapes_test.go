package engine_test

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// profileEntries turns profiling off and returns db's system.profile
// entries on ns in insertion order.
func profileEntries(t *testing.T, db *mongo.Database, ns string) []bson.D {
	t.Helper()
	ctx := ctxT(t)
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("system.profile").Find(ctx, bson.D{{Key: "ns", Value: ns}})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.D
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// keysOf lists an entry's field names, without _id.
func keysOf(d bson.D) string {
	var ks []string
	for _, e := range d {
		if e.Key != "_id" {
			ks = append(ks, e.Key)
		}
	}
	return strings.Join(ks, " ")
}

// TestProfilerWriteStatements checks mongod 7.0's per-statement entries:
// an update command with two statements writes two op "update" entries,
// each with command {q, u, multi, upsert} and its own counts, and a
// delete one op "remove" entry per statement with command {q, limit};
// the commands themselves get no entry.
func TestProfilerWriteStatements(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("pw")
	seedN(t, c, 20)
	createIndex(t, db, "pw", bson.D{{Key: "a", Value: 1}})
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "update", Value: "pw"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "multi", Value: true}},
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 100}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 2}}}}}, {Key: "upsert", Value: true}},
	}}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "delete", Value: "pw"}, {Key: "deletes", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 2}}}, {Key: "limit", Value: 0}},
		bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 3}}}, {Key: "limit", Value: 1}},
	}}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FindOneAndDelete(ctx, bson.D{{Key: "a", Value: 4}}).Err(); err != nil {
		t.Fatal(err)
	}
	es := profileEntries(t, db, "test.pw")
	var ops []string
	for _, e := range es {
		ops = append(ops, lookup(e, "op").(string))
	}
	if got := strings.Join(ops, " "); got != "update update remove remove command" {
		t.Fatalf("ops = %s, want update update remove remove command: %v", got, es)
	}
	u1, u2, d1, d2, fam := es[0], es[1], es[2], es[3], es[4]
	if got := keysOf(u1); got != "op ns command keysExamined docsExamined nMatched nModified numYield queryHash planCacheKey queryFramework locks flowControl millis planSummary ts client allUsers user" {
		t.Errorf("update entry fields: %s", got)
	}
	if got := keysOf(lookup(u1, "command").(bson.D)); got != "q u multi upsert" {
		t.Errorf("update entry command: %v", lookup(u1, "command"))
	}
	if lookup(u1, "command", "multi") != true || lookup(u1, "command", "upsert") != false {
		t.Errorf("update entry command: %v", lookup(u1, "command"))
	}
	if k, d, m, n := lookup(u1, "keysExamined"), lookup(u1, "docsExamined"), lookup(u1, "nMatched"), lookup(u1, "nModified"); k != int32(2) || d != int32(2) || m != int32(2) || n != int32(2) {
		t.Errorf("update statement 1: keys %v docs %v nMatched %v nModified %v, want 2 each", k, d, m, n)
	}
	if s := lookup(u1, "planSummary"); s != "IXSCAN { a: 1 }" {
		t.Errorf("update statement 1 planSummary %v", s)
	}
	if m, n, up := lookup(u2, "nMatched"), lookup(u2, "nModified"), lookup(u2, "nUpserted"); m != int32(0) || n != int32(0) || up != int32(1) {
		t.Errorf("upsert statement: nMatched %v nModified %v nUpserted %v", m, n, up)
	}
	if got := keysOf(lookup(d1, "command").(bson.D)); got != "q limit" {
		t.Errorf("remove entry command: %v", lookup(d1, "command"))
	}
	if n, n2 := lookup(d1, "ndeleted"), lookup(d2, "ndeleted"); n != int32(2) || n2 != int32(1) {
		t.Errorf("ndeleted %v, %v; want 2, 1", n, n2)
	}
	if lookup(d1, "responseLength") != nil || lookup(d1, "protocol") != nil {
		t.Errorf("statement entry with command fields: %v", d1)
	}
	if name := lookup(fam, "command").(bson.D)[0].Key; name != "findAndModify" {
		t.Errorf("command entry %v", fam)
	}
	if n := lookup(fam, "ndeleted"); n != int32(1) {
		t.Errorf("findAndModify ndeleted %v", n)
	}
	if lookup(fam, "responseLength") == nil || lookup(fam, "protocol") != "op_msg" || lookup(fam, "planSummary") != "IXSCAN { a: 1 }" {
		t.Errorf("findAndModify entry %v", fam)
	}
}

// TestProfilerTruncatesLargeCommands checks that an insert whose command
// is over 50 KiB is logged as {$truncated: "<command text>..."}, 50 KiB
// long, so that a bulk load does not flush the 1 MB system.profile.
func TestProfilerTruncatesLargeCommands(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("pt")
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, 5000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "s", Value: "some text"}}
	}
	if _, err := c.InsertMany(ctx, docs, options.InsertMany().SetComment("bulk")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: -1}}); err != nil {
		t.Fatal(err)
	}
	es := profileEntries(t, db, "test.pt")
	if len(es) < 2 {
		t.Fatalf("entries %v", es)
	}
	big := es[0]
	s, ok := lookup(big, "command", "$truncated").(string)
	if !ok {
		t.Fatalf("large insert command not truncated: %.500v", big)
	}
	if len(s) != 50*1024 || !strings.HasSuffix(s, "...") || !strings.HasPrefix(s, `{ insert: "pt", `) {
		t.Errorf("$truncated is %d bytes: %.80s ... %s", len(s), s, s[len(s)-20:])
	}
	if lookup(big, "command", "comment") != "bulk" {
		t.Errorf("truncated command without its comment: %v", lookup(big, "command"))
	}
	if n := lookup(big, "ninserted"); n != int32(len(docs)) {
		t.Errorf("ninserted %v", n)
	}
	raw, _ := bson.Marshal(big)
	if len(raw) > 60*1024 {
		t.Errorf("entry is %d bytes", len(raw))
	}
	small := es[len(es)-1]
	if _, ok := lookup(small, "command").(bson.D); !ok || lookup(small, "command", "insert") != "pt" {
		t.Errorf("small insert command %v", lookup(small, "command"))
	}
}

// TestProfilerReadShapes checks the field order of read entries against
// mongod 7.0's OpDebug::append (less execStats, storage and cpuNanos,
// which this server does not report): find, getMore with its
// originatingCommand, the aggregate, count and distinct commands.
func TestProfilerReadShapes(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("pr")
	seedN(t, c, 10)
	createIndex(t, db, "pr", bson.D{{Key: "a", Value: 1}})
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Find(ctx, bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 8}}}}, options.Find().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.D
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "pr"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Distinct(ctx, "b", bson.D{{Key: "a", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	es := profileEntries(t, db, "test.pr")
	want := []string{
		"query: op ns command cursorid keysExamined docsExamined numYield nreturned queryHash planCacheKey queryFramework locks flowControl responseLength protocol millis planSummary ts client allUsers user",
		"getmore: op ns command originatingCommand cursorid keysExamined docsExamined numYield nreturned queryFramework locks flowControl responseLength protocol millis planSummary ts client allUsers user",
		"getmore: op ns command originatingCommand cursorid keysExamined docsExamined cursorExhausted numYield nreturned queryFramework locks flowControl responseLength protocol millis planSummary ts client allUsers user",
		"command: op ns command keysExamined docsExamined numYield queryHash planCacheKey queryFramework locks flowControl responseLength protocol millis planSummary ts client allUsers user",
		"command: op ns command keysExamined docsExamined numYield queryHash planCacheKey queryFramework locks flowControl responseLength protocol millis planSummary ts client allUsers user",
	}
	if len(es) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(es), len(want), es)
	}
	for i, e := range es {
		if got := lookup(e, "op").(string) + ": " + keysOf(e); got != want[i] {
			t.Errorf("entry %d:\n got  %s\n want %s", i, got, want[i])
		}
	}
	if n := lookup(es[0], "nreturned"); n != int32(1) {
		t.Errorf("find nreturned %v, want 1", n)
	}
	if lookup(es[1], "originatingCommand", "find") != "pr" {
		t.Errorf("getMore originatingCommand %v", lookup(es[1], "originatingCommand"))
	}
	for i, name := range map[int]string{3: "count", 4: "distinct"} {
		plan := map[string]string{"count": "COUNT_SCAN { a: 1 }", "distinct": "IXSCAN { a: 1 }"}[name]
		if lookup(es[i], "command", name) != "pr" || lookup(es[i], "planSummary") != plan {
			t.Errorf("%s entry %v", name, es[i])
		}
	}
}
