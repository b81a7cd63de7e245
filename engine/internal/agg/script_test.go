package agg

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/internal/scripttest"
)

// TestAggScriptsLocal runs the scripts of engine/testdata/agg through
// Parse and Run over an in-memory fake Host, without the engine. The
// command layer runs the same scripts through the driver.
func TestAggScriptsLocal(t *testing.T) {
	files, err := filepath.Glob("../../testdata/agg/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			scripttest.RunBackend(t, &localBackend{host: newFakeHost()}, f)
		})
	}
}

// localBackend answers the commands scripts send: aggregate and
// createIndexes (unique indexes for $merge), over a fakeHost.
type localBackend struct {
	host *fakeHost
}

const testDB = "test"

func (b *localBackend) Reset(_ context.Context, coll string, docs []bson.Raw) error {
	ns := nsOf(testDB, coll)
	b.host.colls[ns] = nil
	delete(b.host.uniques, ns)
	return b.host.Insert(context.Background(), ns, docs)
}

func cmdErr(err error) error {
	me := mongoerr.As(err)
	return mongo.CommandError{Code: int32(me.Code), Name: me.Code.Name(), Message: me.Msg}
}

func (b *localBackend) Command(ctx context.Context, cmd bson.D) (bson.Raw, error) {
	raw, err := bson.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	doc := bson.Raw(raw)
	switch cmd[0].Key {
	case "aggregate":
		return b.aggregate(ctx, doc)
	case "createIndexes":
		coll := doc.Lookup("createIndexes").StringValue()
		ns := nsOf(testDB, coll)
		before := 1 + len(b.host.uniques[ns])
		for _, iv := range expr.Values(doc.Lookup("indexes")) {
			spec := iv.Document()
			if u, ok := spec.Lookup("unique").BooleanOK(); ok && u {
				var fields []string
				for _, el := range mustElems(spec.Lookup("key").Document()) {
					fields = append(fields, el.Key())
				}
				b.host.uniques[ns] = append(b.host.uniques[ns], fields)
			}
		}
		return bson.Marshal(bson.D{{Key: "numIndexesBefore", Value: int32(before)}, {Key: "numIndexesAfter", Value: int32(1 + len(b.host.uniques[ns]))}, {Key: "createdCollectionAutomatically", Value: false}, {Key: "ok", Value: 1.0}})
	}
	return nil, fmt.Errorf("local backend: unsupported command %v", cmd)
}

func (b *localBackend) aggregate(ctx context.Context, doc bson.Raw) (bson.Raw, error) {
	opts := Options{DB: testDB, AllowDiskUse: true, Now: time.Now()}
	av := doc.Lookup("aggregate")
	if s, ok := av.StringValueOK(); ok {
		opts.Coll = s
	}
	if l, ok := doc.Lookup("let").DocumentOK(); ok {
		opts.Let = l
	}
	if a, ok := doc.Lookup("allowDiskUse").BooleanOK(); ok {
		opts.AllowDiskUse = a
	}
	var stages []bson.Raw
	for _, v := range expr.Values(doc.Lookup("pipeline")) {
		d, ok := v.DocumentOK()
		if !ok {
			return nil, cmdErr(mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object"))
		}
		stages = append(stages, d)
	}
	out, executing, err := runAggregateStep(ctx, b.host, stages, opts)
	if err != nil {
		if executing {
			me := *mongoerr.As(err)
			me.Msg = "PlanExecutor error during aggregation :: caused by :: " + me.Msg
			err = &me
		}
		return nil, cmdErr(err)
	}
	batch := bson.A{}
	for _, d := range out {
		batch = append(batch, d)
	}
	coll := opts.Coll
	if coll == "" {
		coll = "$cmd.aggregate"
	}
	return bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: batch}, {Key: "id", Value: int64(0)}, {Key: "ns", Value: testDB + "." + coll}}}, {Key: "ok", Value: 1.0}})
}

// runAggregate parses and runs a pipeline over host as the command layer
// does.
func runAggregate(ctx context.Context, host *fakeHost, stages []bson.Raw, opts Options) ([]bson.Raw, error) {
	out, _, err := runAggregateStep(ctx, host, stages, opts)
	return out, err
}

// runAggregateStep is runAggregate that also tells whether an error came
// from running the pipeline (after parsing and planning), which the
// aggregate command reports with mongod's executor context.
func runAggregateStep(ctx context.Context, host *fakeHost, stages []bson.Raw, opts Options) ([]bson.Raw, bool, error) {
	p, err := Parse(stages, opts)
	if err != nil {
		return nil, false, err
	}
	var in Source
	if p.NeedsInput() {
		if opts.Coll == "" {
			return nil, false, mongoerr.New(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for '$match'; a collection is required.")
		}
		if in, err = host.Open(ctx, nsOf(opts.DB, opts.Coll), p.Query()); err != nil {
			return nil, false, err
		}
	}
	src, err := p.Run(ctx, host, in)
	if err != nil {
		return nil, false, err
	}
	out, err := drain(ctx, src)
	return out, err != nil, err
}

var _ = strings.Cut
