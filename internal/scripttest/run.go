package scripttest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Backend is what a script runs against.
type Backend interface {
	// Reset drops collection coll and fills it with docs in order.
	Reset(ctx context.Context, coll string, docs []bson.Raw) error
	// Command runs one command and returns its reply. A failed command
	// returns a mongo.CommandError (or an error wrapping one).
	Command(ctx context.Context, cmd bson.D) (bson.Raw, error)
}

// Run runs the script at path against db.
func Run(t *testing.T, db *mongo.Database, path string) {
	RunBackend(t, DriverBackend(db), path)
}

// RunBackend runs the script at path against b.
func RunBackend(t *testing.T, b Backend, path string) {
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		ctx := context.Background()
		coll := "c"
		if d.HasArg("coll") {
			d.ScanArgs(t, "coll", &coll)
		}
		switch d.Cmd {
		case "docs":
			var docs []bson.Raw
			for _, line := range lines(d.Input) {
				doc, err := ParseDoc(line)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				docs = append(docs, doc)
			}
			if err := b.Reset(ctx, coll, docs); err != nil {
				d.Fatalf(t, "docs: %v", err)
			}
			return ""
		case "find":
			cmd, err := findCommand(coll, d.Input)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			if d.HasArg("ids") {
				return runIDs(ctx, t, b, cmd)
			}
			return runCommand(ctx, t, b, cmd)
		case "cmd":
			doc, err := ParseDoc(d.Input)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			var cmd bson.D
			if err := bson.Unmarshal(doc, &cmd); err != nil {
				d.Fatalf(t, "%v", err)
			}
			return runCommand(ctx, t, b, cmd)
		}
		d.Fatalf(t, "unknown directive %q", d.Cmd)
		return ""
	})
}

func lines(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// findCommand builds the find command of a find directive.
func findCommand(coll, input string) (bson.D, error) {
	cmd := bson.D{{Key: "find", Value: coll}}
	ls := lines(input)
	filter := bson.Raw(emptyDoc)
	if len(ls) > 0 && strings.HasPrefix(strings.TrimSpace(ls[0]), "{") {
		f, err := ParseDoc(ls[0])
		if err != nil {
			return nil, err
		}
		filter = f
		ls = ls[1:]
	}
	cmd = append(cmd, bson.E{Key: "filter", Value: filter})
	for _, l := range ls {
		name, rest, _ := strings.Cut(strings.TrimSpace(l), " ")
		rest = strings.TrimSpace(rest)
		switch name {
		case "sort", "projection":
			doc, err := ParseDoc(rest)
			if err != nil {
				return nil, err
			}
			cmd = append(cmd, bson.E{Key: name, Value: doc})
		case "skip", "limit":
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("find: %s: %w", name, err)
			}
			cmd = append(cmd, bson.E{Key: name, Value: n})
		default:
			return nil, fmt.Errorf("find: unknown option line %q", l)
		}
	}
	return cmd, nil
}

var emptyDoc = []byte{5, 0, 0, 0, 0}

// runIDs runs a find that prints only the _id values of the result, on
// one line in relaxed Extended JSON, sorted by _id unless the directive
// gave a sort, and projected to _id unless it gave a projection.
func runIDs(ctx context.Context, t *testing.T, b Backend, cmd bson.D) string {
	hasSort, hasProj := false, false
	for _, e := range cmd {
		hasSort = hasSort || e.Key == "sort"
		hasProj = hasProj || e.Key == "projection"
	}
	if !hasSort {
		cmd = append(cmd, bson.E{Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}})
	}
	if !hasProj {
		cmd = append(cmd, bson.E{Key: "projection", Value: bson.D{{Key: "_id", Value: 1}}})
	}
	out := runCommand(ctx, t, b, cmd)
	if strings.HasPrefix(out, "error ") {
		return out
	}
	var ids []string
	for _, line := range lines(out) {
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(line), true, &doc); err != nil {
			t.Fatalf("result %s: %v", line, err)
		}
		v, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: doc.Lookup("_id")}}, false, false)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(string(v), `{"v":`), "}"))
	}
	return "ids: " + strings.Join(ids, ",") + "\n"
}

// FormatError renders a command failure as scripts expect it.
func FormatError(err error) string {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return fmt.Sprintf("error %s(%d)", ce.Name, ce.Code)
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return fmt.Sprintf("error %d", we.WriteErrors[0].Code)
	}
	return "error " + err.Error()
}

func canonical(t *testing.T, doc bson.Raw) string {
	b, err := bson.MarshalExtJSON(doc, true, false)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func runCommand(ctx context.Context, t *testing.T, b Backend, cmd bson.D) string {
	reply, err := b.Command(ctx, cmd)
	if err != nil {
		return FormatError(err) + "\n"
	}
	if cur, ok := reply.Lookup("cursor").DocumentOK(); ok {
		return drain(ctx, t, b, cur)
	}
	var out bson.D
	switch cmd[0].Key {
	case "insert", "update", "delete", "findAndModify", "findandmodify":
		for _, k := range []string{"n", "nModified", "upserted", "writeErrors", "value", "lastErrorObject"} {
			v, err := reply.LookupErr(k)
			if err != nil {
				continue
			}
			if k == "writeErrors" {
				out = append(out, bson.E{Key: k, Value: writeErrorCodes(v)})
				continue
			}
			out = append(out, bson.E{Key: k, Value: v})
		}
	default:
		elems, _ := reply.Elements()
		for _, e := range elems {
			k := e.Key()
			if k == "ok" || k == "operationTime" || strings.HasPrefix(k, "$") {
				continue
			}
			out = append(out, bson.E{Key: k, Value: e.Value()})
		}
	}
	raw, err := bson.Marshal(out)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return canonical(t, raw) + "\n"
}

func writeErrorCodes(v bson.RawValue) bson.A {
	var out bson.A
	arr, ok := v.ArrayOK()
	if !ok {
		return out
	}
	vals, _ := arr.Values()
	for _, e := range vals {
		d, ok := e.DocumentOK()
		if !ok {
			continue
		}
		out = append(out, bson.D{{Key: "index", Value: d.Lookup("index")}, {Key: "code", Value: d.Lookup("code")}})
	}
	return out
}

// drain prints the documents of a cursor reply and its getMore batches.
func drain(ctx context.Context, t *testing.T, b Backend, cur bson.Raw) string {
	var sb strings.Builder
	for {
		batch, ok := cur.Lookup("firstBatch").ArrayOK()
		if !ok {
			batch, _ = cur.Lookup("nextBatch").ArrayOK()
		}
		vals, _ := batch.Values()
		for _, v := range vals {
			sb.WriteString(canonical(t, v.Document()))
			sb.WriteByte('\n')
		}
		id, _ := cur.Lookup("id").AsInt64OK()
		if id == 0 {
			return sb.String()
		}
		ns := cur.Lookup("ns").StringValue()
		_, collName, _ := strings.Cut(ns, ".")
		reply, err := b.Command(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: collName}})
		if err != nil {
			sb.WriteString(FormatError(err) + "\n")
			return sb.String()
		}
		next, ok := reply.Lookup("cursor").DocumentOK()
		if !ok {
			t.Fatalf("getMore reply without cursor: %s", reply)
		}
		cur = next
	}
}

// DriverBackend runs scripts through the official driver against db.
func DriverBackend(db *mongo.Database) Backend { return driverBackend{db} }

type driverBackend struct{ db *mongo.Database }

func (d driverBackend) Reset(ctx context.Context, coll string, docs []bson.Raw) error {
	c := d.db.Collection(coll)
	if err := c.Drop(ctx); err != nil {
		return err
	}
	if len(docs) == 0 {
		return d.db.CreateCollection(ctx, coll)
	}
	items := make([]any, len(docs))
	for i, doc := range docs {
		items[i] = doc
	}
	_, err := c.InsertMany(ctx, items)
	return err
}

func (d driverBackend) Command(ctx context.Context, cmd bson.D) (bson.Raw, error) {
	return d.db.RunCommand(ctx, cmd).Raw()
}
