package projection_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/engine/internal/projection"
	"github.com/formworkdb/formwork/internal/scripttest"
)

// TestQueryScriptsLocal runs engine/testdata/query through match, order and
// projection directly, without the engine: a find is compiled here in
// mongod's order (filter, projection, sort) and applied to the documents of
// the last docs directive. The same scripts run against the engine in
// engine.TestQueryScripts.
func TestQueryScriptsLocal(t *testing.T) {
	files, err := filepath.Glob("../../testdata/query/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			scripttest.RunBackend(t, &localBackend{colls: map[string][]bson.Raw{}}, f)
		})
	}
}

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
	if len(cmd) == 0 || cmd[0].Key != "find" {
		return nil, fmt.Errorf("local backend runs only find, not %v", cmd)
	}
	coll := cmd[0].Value.(string)
	var filter, sort, proj bson.Raw
	var skip, limit int64
	for _, e := range cmd[1:] {
		switch e.Key {
		case "filter":
			filter = e.Value.(bson.Raw)
		case "sort":
			sort = toRaw(e.Value)
		case "projection":
			proj = toRaw(e.Value)
		case "skip":
			skip = e.Value.(int64)
		case "limit":
			limit = e.Value.(int64)
		}
	}
	f, err := match.Compile(filter)
	if err != nil {
		return nil, cmdErr(err)
	}
	var p *projection.Projection
	if proj != nil {
		if p, err = projection.Compile(proj); err != nil {
			return nil, cmdErr(err)
		}
		if err := p.Validate(f); err != nil {
			return nil, cmdErr(err)
		}
	}
	var o *order.Order
	if sort != nil {
		if o, err = order.Compile(sort); err != nil {
			return nil, cmdErr(err)
		}
	}
	type keyed struct {
		key order.Key
		doc bson.Raw
	}
	var rows []keyed
	for _, d := range b.colls[coll] {
		if !f.Match(d) {
			continue
		}
		var k order.Key
		if o != nil {
			if k, err = o.Key(d); err != nil {
				return nil, cmdErr(err)
			}
		}
		rows = append(rows, keyed{k, d})
	}
	if o != nil {
		if dir, ok := o.Natural(); ok && dir < 0 {
			slices.Reverse(rows)
		} else {
			slices.SortStableFunc(rows, func(a, b keyed) int { return o.CompareKeys(a.key, b.key) })
		}
	}
	rows = rows[min(int(skip), len(rows)):]
	if limit > 0 && int(limit) < len(rows) {
		rows = rows[:limit]
	}
	batch := bson.A{}
	for _, r := range rows {
		doc := r.doc
		if p != nil {
			if doc, err = p.Apply(doc, f); err != nil {
				return nil, cmdErr(err)
			}
		}
		batch = append(batch, doc)
	}
	return bson.Marshal(bson.D{
		{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: batch}, {Key: "id", Value: int64(0)}, {Key: "ns", Value: "test." + coll}}},
		{Key: "ok", Value: 1.0},
	})
}

func toRaw(v any) bson.Raw {
	if r, ok := v.(bson.Raw); ok {
		return r
	}
	r, err := bson.Marshal(v)
	if err != nil {
		panic(err)
	}
	return r
}
