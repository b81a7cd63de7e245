package engine_test

import (
	"crypto/md5"
	"encoding/hex"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func runCmd(t *testing.T, db *mongo.Database, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return db.RunCommand(ctxT(t), cmd).Raw()
}

// TestApplyOps checks applyOps entries of every kind, the results array,
// and mongod's error replies.
func TestApplyOps(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("ops")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "arr", Value: bson.A{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	ns := "test.ops"
	reply, err := runCmd(t, db, bson.D{{Key: "applyOps", Value: bson.A{
		bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 1}}}},
		bson.D{{Key: "op", Value: "n"}, {Key: "ns", Value: ""}, {Key: "o", Value: bson.D{{Key: "msg", Value: "noop"}}}},
		bson.D{{Key: "op", Value: "u"}, {Key: "ns", Value: ns}, {Key: "o2", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "o", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 5}}}}}},
		bson.D{{Key: "op", Value: "u"}, {Key: "ns", Value: ns}, {Key: "o2", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "o", Value: bson.D{{Key: "$v", Value: 2}, {Key: "diff", Value: bson.D{
			{Key: "i", Value: bson.D{{Key: "b", Value: "new"}}},
			{Key: "sarr", Value: bson.D{{Key: "a", Value: true}, {Key: "u1", Value: 20}}},
		}}}}},
		// An insert of an existing _id replaces the document.
		bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{{Key: "_id", Value: 2}, {Key: "y", Value: 2}}}},
		bson.D{{Key: "op", Value: "d"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{{Key: "_id", Value: 99}}}},
		bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "test.$cmd"}, {Key: "o", Value: bson.D{{Key: "create", Value: "made"}}}},
		bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "test.$cmd"}, {Key: "o", Value: bson.D{{Key: "createIndexes", Value: "ops"}, {Key: "v", Value: 2}, {Key: "key", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "name", Value: "x_1"}}}},
	}}})
	if err != nil {
		t.Fatalf("applyOps: %v", err)
	}
	if n := reply.Lookup("applied").Int32(); n != 7 {
		t.Errorf("applied = %d, want 7 (the no-op is not counted): %v", n, reply)
	}
	if res := reply.Lookup("results").Array().String(); res != "[true,true,true,true,true,true,true]" {
		t.Errorf("results = %s", res)
	}
	var one, two bson.M
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&one); err != nil {
		t.Fatal(err)
	}
	if one["a"] != int32(5) || one["b"] != "new" || one["arr"].(bson.A)[1] != int32(20) {
		t.Errorf("updated document = %v", one)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&two); err != nil {
		t.Fatal(err)
	}
	if _, had := two["x"]; had || two["y"] != int32(2) {
		t.Errorf("insert over an existing _id = %v, want the replacement", two)
	}
	names, _ := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "made"}})
	if len(names) != 1 {
		t.Errorf("create entry did not create: %v", names)
	}

	// An update that matches nothing is a soft failure: the rest is applied
	// and the command answers UnknownError with the results.
	_, err = runCmd(t, db, bson.D{{Key: "applyOps", Value: bson.A{
		bson.D{{Key: "op", Value: "u"}, {Key: "ns", Value: ns}, {Key: "o2", Value: bson.D{{Key: "_id", Value: 404}}}, {Key: "o", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}},
		bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{{Key: "_id", Value: 3}}}},
	}}})
	wantCode(t, err, 8, "UnknownError")
	if n, _ := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: 3}}); n != 1 {
		t.Errorf("the entry after a soft failure was not applied")
	}
	var ce mongo.CommandError
	if asCommandError(err, &ce) {
		if res := ce.Raw.Lookup("results").Array().String(); res != "[false,true]" {
			t.Errorf("results after a soft failure = %s", res)
		}
	}

	// A hard failure stops: the insert into a missing collection.
	_, err = runCmd(t, db, bson.D{{Key: "applyOps", Value: bson.A{
		bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "test.nope"}, {Key: "o", Value: bson.D{{Key: "_id", Value: 1}}}},
		bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{{Key: "_id", Value: 4}}}},
	}}})
	wantCode(t, err, 26, "NamespaceNotFound")
	if n, _ := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: 4}}); n != 0 {
		t.Errorf("an entry after a hard failure was applied")
	}

	for _, bad := range []struct {
		ops  any
		code int
	}{
		{1, 14},
		{bson.A{1}, 9},
		{bson.A{bson.D{{Key: "ns", Value: ns}, {Key: "o", Value: bson.D{}}}}, 20},
		{bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "o", Value: bson.D{}}}}, 20},
		{bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: ns}}}, 4},
		{bson.A{bson.D{{Key: "op", Value: "u"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{}}}}, 4},
		{bson.A{bson.D{{Key: "op", Value: "x"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{}}}}, 2},
		{bson.A{bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "test.$cmd"}, {Key: "o", Value: bson.D{{Key: "fsync", Value: 1}}}}}, 2},
		{bson.A{
			bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "test.$cmd"}, {Key: "o", Value: bson.D{{Key: "dropDatabase", Value: 1}}}},
			bson.D{{Key: "op", Value: "n"}, {Key: "ns", Value: ""}, {Key: "o", Value: bson.D{}}},
		}, 6275900},
	} {
		_, err := runCmd(t, db, bson.D{{Key: "applyOps", Value: bad.ops}})
		wantCode(t, err, bad.code, "")
	}
}

// TestApplyOpsPreCondition checks applyOps's preCondition, after mongod's
// _checkPrecondition: each {ns, q, res} matches the first document q
// finds (an empty document when none) against res, a filter; a miss fails
// the whole command with BadValue "preCondition failed", got and
// whatFailed, before any entry is applied.
func TestApplyOpsPreCondition(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("pc")
	if _, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "v", Value: 10}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 1}, {Key: "v", Value: 20}},
	}); err != nil {
		t.Fatal(err)
	}
	ns := "test.pc"
	insert := func(id int) bson.D {
		return bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: ns}, {Key: "o", Value: bson.D{{Key: "_id", Value: id}}}}
	}
	cond := func(q, res bson.D) bson.D {
		return bson.D{{Key: "ns", Value: ns}, {Key: "q", Value: q}, {Key: "res", Value: res}}
	}
	count := func(id int) int64 {
		n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Met: the entries are applied.
	reply, err := runCmd(t, db, bson.D{{Key: "applyOps", Value: bson.A{insert(10)}}, {Key: "preCondition", Value: bson.A{
		cond(bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "v", Value: 10}}),
		cond(bson.D{{Key: "query", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "orderby", Value: bson.D{{Key: "v", Value: -1}}}}, bson.D{{Key: "v", Value: bson.D{{Key: "$gt", Value: 15}}}}),
		// No document: res is matched against {}.
		cond(bson.D{{Key: "_id", Value: 404}}, bson.D{{Key: "v", Value: bson.D{{Key: "$exists", Value: false}}}}),
	}}})
	if err != nil {
		t.Fatalf("applyOps with met preconditions: %v", err)
	}
	if n := reply.Lookup("applied").Int32(); n != 1 || count(10) != 1 {
		t.Errorf("applied = %d, inserted %d", n, count(10))
	}

	// Failed: nothing is applied.
	_, err = runCmd(t, db, bson.D{{Key: "applyOps", Value: bson.A{insert(11)}}, {Key: "preCondition", Value: bson.A{
		cond(bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "v", Value: 10}}),
		cond(bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "v", Value: 99}}),
	}}})
	wantCode(t, err, 2, "BadValue")
	var ce mongo.CommandError
	if asCommandError(err, &ce) {
		if ce.Message != "preCondition failed" {
			t.Errorf("message = %q", ce.Message)
		}
		if got := ce.Raw.Lookup("got", "v"); got.Type == 0 || got.Int32() != 20 {
			t.Errorf("got = %v", ce.Raw.Lookup("got"))
		}
		if w := ce.Raw.Lookup("whatFailed", "res", "v"); w.Type == 0 || w.Int32() != 99 {
			t.Errorf("whatFailed = %v", ce.Raw.Lookup("whatFailed"))
		}
	}
	if count(11) != 0 {
		t.Errorf("an entry was applied after a failed precondition")
	}

	for _, bad := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "applyOps", Value: bson.A{insert(12)}}, {Key: "preCondition", Value: 1}}, 14},
		{bson.D{{Key: "applyOps", Value: bson.A{insert(12)}}, {Key: "preCondition", Value: bson.A{bson.D{{Key: "ns", Value: 1}, {Key: "q", Value: bson.D{}}, {Key: "res", Value: bson.D{}}}}}}, 73},
		{bson.D{{Key: "applyOps", Value: bson.A{insert(12)}}, {Key: "preCondition", Value: bson.A{bson.D{{Key: "ns", Value: "test.missing"}, {Key: "q", Value: bson.D{}}, {Key: "res", Value: bson.D{}}}}}}, 26},
		{bson.D{{Key: "applyOps", Value: bson.A{insert(12)}}, {Key: "preCondition", Value: bson.A{bson.D{{Key: "ns", Value: "nodb.x"}, {Key: "q", Value: bson.D{}}, {Key: "res", Value: bson.D{}}}}}}, 26},
		{bson.D{{Key: "applyOps", Value: bson.A{insert(12)}}, {Key: "allowAtomic", Value: false}, {Key: "preCondition", Value: bson.A{cond(bson.D{}, bson.D{})}}}, 72},
		{bson.D{{Key: "applyOps", Value: bson.A{bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "test.$cmd"}, {Key: "o", Value: bson.D{{Key: "create", Value: "pc2"}}}}}}, {Key: "preCondition", Value: bson.A{cond(bson.D{}, bson.D{})}}}, 72},
	} {
		_, err := runCmd(t, db, bad.cmd)
		wantCode(t, err, bad.code, "")
	}
	if count(12) != 0 {
		t.Errorf("an entry was applied despite a bad precondition")
	}
}

func asCommandError(err error, ce *mongo.CommandError) bool {
	e, ok := err.(mongo.CommandError)
	if ok {
		*ce = e
	}
	return ok
}

// TestDBHash checks dbHash's md5 per collection (documents in _id order)
// and overall (the per-collection digests in name order).
func TestDBHash(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	docs := map[string][]bson.D{
		"b": {{{Key: "_id", Value: 2}, {Key: "v", Value: "x"}}, {{Key: "_id", Value: 1}}},
		"a": {{{Key: "_id", Value: "k"}}},
	}
	for name, ds := range docs {
		for _, d := range ds {
			if _, err := db.Collection(name).InsertOne(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.CreateCollection(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	digest := func(ds ...bson.D) string {
		h := md5.New()
		for _, d := range ds {
			b, _ := bson.Marshal(d)
			h.Write(b)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	want := map[string]string{
		"a":     digest(docs["a"][0]),
		"b":     digest(docs["b"][1], docs["b"][0]), // _id order
		"empty": digest(),
	}
	reply, err := runCmd(t, db, bson.D{{Key: "dbHash", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	colls := reply.Lookup("collections").Document()
	overall := md5.New()
	for _, name := range []string{"a", "b", "empty"} {
		if got := colls.Lookup(name).StringValue(); got != want[name] {
			t.Errorf("collections.%s = %s, want %s", name, got, want[name])
		}
		overall.Write([]byte(want[name]))
	}
	if got := reply.Lookup("md5").StringValue(); got != hex.EncodeToString(overall.Sum(nil)) {
		t.Errorf("md5 = %s", got)
	}
	if _, err := reply.LookupErr("uuids", "a"); err != nil {
		t.Errorf("uuids.a missing: %v", reply)
	}
	if _, err := reply.LookupErr("host"); err != nil {
		t.Errorf("host missing: %v", reply)
	}
	reply, err = runCmd(t, db, bson.D{{Key: "dbHash", Value: 1}, {Key: "collections", Value: bson.A{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(mustElems(t, reply.Lookup("collections").Document())); n != 1 {
		t.Errorf("collections filter kept %d collections", n)
	}
	_, err = runCmd(t, db, bson.D{{Key: "dbHash", Value: 1}, {Key: "collections", Value: bson.A{1}}})
	wantCode(t, err, 2, "BadValue")
}

func mustElems(t *testing.T, d bson.Raw) []bson.RawElement {
	t.Helper()
	es, err := d.Elements()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestDataSize checks dataSize over a collection, a key range, a missing
// collection and its limits.
func TestDataSize(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("ds")
	var total int
	for i := 0; i < 5; i++ {
		d := bson.D{{Key: "_id", Value: int32(i)}, {Key: "pad", Value: "xxxxxxxx"}}
		b, _ := bson.Marshal(d)
		total += len(b)
		if _, err := c.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	reply, err := runCmd(t, db, bson.D{{Key: "dataSize", Value: "test.ds"}})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Lookup("size").Int32() != int32(total) || reply.Lookup("numObjects").Int32() != 5 {
		t.Errorf("dataSize = %v, want size %d", reply, total)
	}
	reply, err = runCmd(t, db, bson.D{{Key: "dataSize", Value: "test.ds"}, {Key: "keyPattern", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "min", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "max", Value: bson.D{{Key: "_id", Value: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Lookup("numObjects").Int32() != 2 || reply.Lookup("size").Int32() != int32(2*total/5) {
		t.Errorf("dataSize of [1, 3) = %v", reply)
	}
	reply, err = runCmd(t, db, bson.D{{Key: "dataSize", Value: "test.missing"}})
	if err != nil || reply.Lookup("size").Int32() != 0 || reply.Lookup("numObjects").Int32() != 0 {
		t.Errorf("missing collection: %v %v", reply, err)
	}
	reply, err = runCmd(t, db, bson.D{{Key: "dataSize", Value: "test.ds"}, {Key: "maxObjects", Value: 2}})
	if err != nil || !reply.Lookup("maxReached").Boolean() {
		t.Errorf("maxObjects: %v %v", reply, err)
	}
	_, err = runCmd(t, db, bson.D{{Key: "dataSize", Value: "test.ds"}, {Key: "keyPattern", Value: bson.D{{Key: "pad", Value: 1}}}, {Key: "min", Value: bson.D{{Key: "pad", Value: "a"}}}, {Key: "max", Value: bson.D{{Key: "pad", Value: "z"}}}})
	wantCode(t, err, 96, "OperationFailed")
	_, err = runCmd(t, db, bson.D{{Key: "dataSize", Value: 1}})
	wantCode(t, err, 73, "InvalidNamespace")
}

// TestValidateDBMetadata checks that sparse indexes are reported under
// strict API version 1 and nothing otherwise.
func TestValidateDBMetadata(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "m"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "sparse", Value: true}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	reply, err := runCmd(t, db, bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "db", Value: "test"}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}, {Key: "strict", Value: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	errs := reply.Lookup("apiVersionErrors").Array()
	vals, _ := errs.Values()
	if len(vals) != 1 || vals[0].Document().Lookup("ns").StringValue() != "test.m" || vals[0].Document().Lookup("code").Int32() != 323 {
		t.Errorf("apiVersionErrors = %v", errs)
	}
	reply, err = runCmd(t, db, bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if vals, _ := reply.Lookup("apiVersionErrors").Array().Values(); len(vals) != 0 {
		t.Errorf("non-strict check reported %v", vals)
	}
	_, err = runCmd(t, db, bson.D{{Key: "validateDBMetadata", Value: 1}})
	wantCode(t, err, 40414, "")
}
