package update

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/internal/scripttest"
)

// scriptNow is the clock of every script: $currentDate writes it.
var scriptNow = scripttest.Now

// TestScripts runs engine/testdata/update/*.txt without the engine or the
// driver: a localBackend answers update and find commands with Compile,
// Apply and Upsert, matching with the match package. The same files run
// through the driver against the engine in engine.TestUpdateScripts, with
// the same expectations; a failure here that the engine test does not show
// points at the command layer's use of this package. Re-record through the
// engine test (go test ./engine -run TestUpdateScripts -rewrite), not here.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/update/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			newObjectID = sequentialIDs()
			t.Cleanup(func() { newObjectID = bson.NewObjectID })
			scripttest.RunBackend(t, &localBackend{colls: map[string][]bson.Raw{}}, f)
		})
	}
}

// localBackend keeps collections as slices in record order and runs the
// update and find commands of the scripts the way the command layer does:
// statements in order, the first matching document (or all with multi),
// an upsert when nothing matched, and writeErrors for failed statements.
type localBackend struct {
	colls map[string][]bson.Raw
}

func (b *localBackend) Reset(_ context.Context, coll string, docs []bson.Raw) error {
	b.colls[coll] = docs
	return nil
}

func (b *localBackend) Command(_ context.Context, cmd bson.D) (bson.Raw, error) {
	raw, err := bson.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	switch cmd[0].Key {
	case "find":
		return b.find(raw)
	case "update":
		return b.update(raw)
	}
	return nil, fmt.Errorf("local backend runs only find and update, not %s", cmd[0].Key)
}

// commandError converts an error of this package or of match into the
// error the driver returns for a failed command.
func commandError(err error) error {
	me := mongoerr.As(err)
	return mongo.CommandError{Code: int32(me.Code), Name: me.Code.Name(), Message: me.Msg}
}

func (b *localBackend) find(cmd bson.Raw) (bson.Raw, error) {
	coll := cmd.Lookup("find").StringValue()
	filter := bson.Raw{5, 0, 0, 0, 0}
	elems, err := cmd.Elements()
	if err != nil {
		return nil, err
	}
	for _, e := range elems[1:] {
		switch e.Key() {
		case "filter":
			filter = e.Value().Document()
		default:
			return nil, fmt.Errorf("local backend: find option %s is not supported", e.Key())
		}
	}
	q, err := compileQuery(filter)
	if err != nil {
		return nil, commandError(err)
	}
	batch := bson.A{}
	for _, d := range b.colls[coll] {
		if q.matchDoc(d) {
			batch = append(batch, d)
		}
	}
	return bson.Marshal(bson.D{
		{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: batch}, {Key: "id", Value: int64(0)}, {Key: "ns", Value: "test." + coll}}},
		{Key: "ok", Value: 1.0},
	})
}

// updateCounts accumulates the reply of an update command.
type updateCounts struct {
	n, nModified int32
	upserted     bson.A
}

func (b *localBackend) update(cmd bson.Raw) (bson.Raw, error) {
	coll := cmd.Lookup("update").StringValue()
	ordered := true
	if v, err := cmd.LookupErr("ordered"); err == nil {
		ordered = v.Boolean()
	}
	stmts, err := cmd.Lookup("updates").Array().Values()
	if err != nil {
		return nil, err
	}
	var c updateCounts
	var writeErrors bson.A
	for i, s := range stmts {
		err := b.updateOne(coll, i, s.Document(), &c)
		if err == nil {
			continue
		}
		// A MongoDB error fails the statement; anything else is a broken
		// script or a bug and fails the whole command.
		var me *mongoerr.Error
		if !errors.As(err, &me) {
			return nil, err
		}
		writeErrors = append(writeErrors, mongoerr.WriteError{Index: i, Err: me}.Doc())
		if ordered {
			break
		}
	}
	reply := bson.D{{Key: "n", Value: c.n}, {Key: "nModified", Value: c.nModified}}
	if len(c.upserted) > 0 {
		reply = append(reply, bson.E{Key: "upserted", Value: c.upserted})
	}
	if len(writeErrors) > 0 {
		reply = append(reply, bson.E{Key: "writeErrors", Value: writeErrors})
	}
	return bson.Marshal(append(reply, bson.E{Key: "ok", Value: 1.0}))
}

// updateOne runs statement i of an update command on coll.
func (b *localBackend) updateOne(coll string, i int, st bson.Raw, c *updateCounts) error {
	var filters []bson.Raw
	if af, err := st.LookupErr("arrayFilters"); err == nil {
		vals, err := af.Array().Values()
		if err != nil {
			return err
		}
		for _, v := range vals {
			filters = append(filters, v.Document())
		}
	}
	multi, upsert := false, false
	if v, err := st.LookupErr("multi"); err == nil {
		multi = v.Boolean()
	}
	if v, err := st.LookupErr("upsert"); err == nil {
		upsert = v.Boolean()
	}
	u, err := Compile(st.Lookup("u"), filters)
	if err != nil {
		return err
	}
	qdoc := st.Lookup("q").Document()
	q, err := compileQuery(qdoc)
	if err != nil {
		return err
	}
	docs := b.colls[coll]
	matched := false
	for j, d := range docs {
		ok, pos := q.matchPos(d)
		if !ok {
			continue
		}
		matched = true
		out, changed, err := u.Apply(d, pos, scriptNow)
		if err != nil {
			return err
		}
		if err := out.Validate(); err != nil {
			return fmt.Errorf("update %d produced an invalid document: %w", i, err)
		}
		c.n++
		if changed {
			c.nModified++
			docs[j] = out
		}
		if !multi {
			break
		}
	}
	if matched || !upsert {
		return nil
	}
	doc, err := u.Upsert(qdoc, scriptNow)
	if err != nil {
		return err
	}
	if err := doc.Validate(); err != nil {
		return fmt.Errorf("upsert %d produced an invalid document: %w", i, err)
	}
	b.colls[coll] = append(docs, doc)
	c.n++
	c.upserted = append(c.upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: doc.Lookup("_id")}})
	return nil
}

// sequentialIDs returns a generator of predictable ObjectIDs for upserts.
func sequentialIDs() func() bson.ObjectID {
	var n uint32
	return func() bson.ObjectID {
		n++
		var id bson.ObjectID
		id[0] = 0x65
		id[8], id[9], id[10], id[11] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		return id
	}
}

// canonical renders doc in canonical Extended JSON for failure messages.
func canonical(doc bson.Raw) string {
	b, err := bson.MarshalExtJSON(doc, true, false)
	if err != nil {
		return "<invalid: " + err.Error() + ">"
	}
	return string(b)
}
