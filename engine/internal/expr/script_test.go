package expr_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/internal/scripttest"
)

// TestExprScriptsLocal runs the eval directives of engine/testdata/expr
// through Parse and Eval directly, without the engine. The same scripts
// run through the driver as aggregations in engine.TestExprScripts.
func TestExprScriptsLocal(t *testing.T) {
	files, err := filepath.Glob("../../testdata/expr/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			scripttest.RunBackend(t, &localBackend{colls: map[string][]bson.Raw{}}, f)
		})
	}
}

// localBackend keeps each collection's documents and answers the
// aggregate that an eval directive sends.
type localBackend struct {
	colls map[string][]bson.Raw
}

func (b *localBackend) Reset(_ context.Context, coll string, docs []bson.Raw) error {
	b.colls[coll] = docs
	return nil
}

func cmdErr(err error) error {
	me := mongoerr.As(err)
	return mongo.CommandError{Code: int32(me.Code), Name: me.Code.Name(), Message: me.Msg}
}

func (b *localBackend) Command(_ context.Context, cmd bson.D) (bson.Raw, error) {
	raw, err := bson.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	coll, _ := bson.Raw(raw).Lookup("aggregate").StringValueOK()
	// The eval directive's pipeline: [{$sort: {_id: 1}}, {$project: {_id: 0, r: <expr>}}].
	stage, err := bson.Raw(raw).LookupErr("pipeline", "1", "$project", "r")
	if err != nil {
		return nil, fmt.Errorf("local backend runs only eval directives, not %v", cmd)
	}
	sc := expr.NewScope()
	e, err := expr.Parse(stage, sc)
	if err != nil {
		return nil, cmdErr(err)
	}
	docs := slices.Clone(b.colls[coll])
	slices.SortStableFunc(docs, func(x, y bson.Raw) int {
		return bsonkit.Compare(x.Lookup("_id"), y.Lookup("_id"))
	})
	c := expr.NewCtx(sc)
	var out bson.A
	for _, d := range docs {
		c.SetRoot(d)
		v, err := e.Eval(c)
		if err != nil {
			return nil, cmdErr(err)
		}
		db := expr.NewDocBuilder()
		db.Append("r", v)
		out = append(out, db.Doc())
	}
	if out == nil {
		out = bson.A{}
	}
	return bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: out}, {Key: "id", Value: int64(0)}, {Key: "ns", Value: "test." + coll}}}, {Key: "ok", Value: 1.0}})
}
