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
	// returns a mongo.CommandError (or an error wrapping one); a write
	// command whose items fail returns its reply with writeErrors.
	Command(ctx context.Context, cmd bson.D) (bson.Raw, error)
}

// Run runs the script at path against db.
func Run(t *testing.T, db *mongo.Database, path string) {
	RunBackend(t, DriverBackend(db), path)
}

// RunBackend runs the script at path against b. Each call has its own
// stand-ins for generated values (see doc.go), numbered from 1.
func RunBackend(t *testing.T, b Backend, path string) {
	r := &runner{b: b, norm: newNormalizer()}
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		out, err := r.directive(context.Background(), t, d)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		return elideMessages(out, d.Expected)
	})
}

// runner runs the directives of one script.
type runner struct {
	b    Backend
	norm *normalizer
	// errInfo prints the errInfo of errors (the cmd directive's errinfo
	// argument).
	errInfo bool
}

// directive runs one directive and returns its output. An error means the
// script or the backend is broken, not that a command failed.
func (r *runner) directive(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
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
				return "", err
			}
			r.norm.learn(doc)
			docs = append(docs, doc)
		}
		if err := r.b.Reset(ctx, coll, docs); err != nil {
			return "", fmt.Errorf("docs: %w", err)
		}
		return "", nil
	case "find":
		cmd, err := findCommand(coll, d.Input)
		if err != nil {
			return "", err
		}
		if err := r.learnCommand(cmd); err != nil {
			return "", err
		}
		if d.HasArg("ids") {
			return r.runIDs(ctx, cmd)
		}
		return r.runCommand(ctx, cmd)
	case "eval":
		cmd, err := evalCommand(coll, d.Input)
		if err != nil {
			return "", err
		}
		if err := r.learnCommand(cmd); err != nil {
			return "", err
		}
		return r.runCommand(ctx, cmd)
	case "agg":
		cmd, err := aggCommand(coll, d.Input)
		if err != nil {
			return "", err
		}
		if err := r.learnCommand(cmd); err != nil {
			return "", err
		}
		return r.runCommand(ctx, cmd)
	case "cmd":
		doc, err := ParseDoc(d.Input)
		if err != nil {
			return "", err
		}
		r.norm.learn(doc)
		var cmd bson.D
		if err := bson.Unmarshal(doc, &cmd); err != nil {
			return "", err
		}
		if len(cmd) == 0 {
			return "", fmt.Errorf("cmd: empty command")
		}
		r.errInfo = d.HasArg("errinfo")
		defer func() { r.errInfo = false }()
		return r.runCommand(ctx, cmd)
	}
	return "", fmt.Errorf("unknown directive %q", d.Cmd)
}

func (r *runner) learnCommand(cmd bson.D) error {
	raw, err := bson.Marshal(cmd)
	if err != nil {
		return err
	}
	r.norm.learn(raw)
	return nil
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

// evalCommand builds the aggregate of an eval directive: the documents in
// _id order, each projected to {r: <expression>}.
func evalCommand(coll, input string) (bson.D, error) {
	e, err := ParseDoc(`{"r": ` + strings.TrimSpace(input) + `}`)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	pipeline := bson.A{
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "r", Value: e.Lookup("r")}}}},
	}
	return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}, nil
}

// aggCommand builds the aggregate of an agg directive: one stage per
// input line, or a whole pipeline array on the first line.
func aggCommand(coll, input string) (bson.D, error) {
	pipeline := bson.A{}
	ls := lines(input)
	if len(ls) > 0 && strings.HasPrefix(strings.TrimSpace(ls[0]), "[") {
		doc, err := ParseDoc(`{"p": ` + strings.Join(ls, "\n") + `}`)
		if err != nil {
			return nil, fmt.Errorf("agg: %w", err)
		}
		return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: doc.Lookup("p")}, {Key: "cursor", Value: bson.D{}}}, nil
	}
	for _, l := range ls {
		st, err := ParseDoc(l)
		if err != nil {
			return nil, fmt.Errorf("agg: %w", err)
		}
		pipeline = append(pipeline, st)
	}
	return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}, nil
}

// runIDs runs a find that prints only the _id values of the result, on
// one line in relaxed Extended JSON, sorted by _id unless the directive
// gave a sort, and projected to _id unless it gave a projection.
func (r *runner) runIDs(ctx context.Context, cmd bson.D) (string, error) {
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
	reply, err := r.b.Command(ctx, cmd)
	if err != nil {
		return FormatError(err) + "\n", nil
	}
	docs, failure, err := r.cursorDocs(ctx, reply)
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(docs))
	for _, doc := range docs {
		b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: r.norm.value(doc.Lookup("_id"))}}, false, false)
		if err != nil {
			return "", err
		}
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(string(b), `{"v":`), "}"))
	}
	return "ids: " + strings.Join(ids, ",") + "\n" + failure, nil
}

// runCommand runs cmd and renders its reply: the documents of a cursor,
// the deterministic fields of a write reply, or any other reply without
// ok, operationTime and $-fields, in canonical Extended JSON.
func (r *runner) runCommand(ctx context.Context, cmd bson.D) (string, error) {
	reply, err := r.b.Command(ctx, cmd)
	if err != nil {
		return FormatError(err) + "\n" + r.commandErrInfo(err), nil
	}
	if _, ok := reply.Lookup("cursor").DocumentOK(); ok {
		docs, failure, err := r.cursorDocs(ctx, reply)
		if err != nil {
			return "", err
		}
		var sb strings.Builder
		for _, doc := range docs {
			s, err := r.canonicalDoc(doc)
			if err != nil {
				return "", err
			}
			sb.WriteString(s + "\n")
		}
		return sb.String() + failure, nil
	}
	if isWrite(cmd[0].Key) {
		return r.formatWrite(reply)
	}
	out := bson.D{}
	elems, err := reply.Elements()
	if err != nil {
		return "", err
	}
	for _, e := range elems {
		k := e.Key()
		if k == "ok" || k == "operationTime" || strings.HasPrefix(k, "$") {
			continue
		}
		out = append(out, bson.E{Key: k, Value: e.Value()})
	}
	raw, err := bson.Marshal(out)
	if err != nil {
		return "", err
	}
	s, err := r.canonicalDoc(raw)
	return s + "\n", err
}

// cursorDocs collects the documents of a cursor reply and of the getMore
// batches after it. A failed getMore ends the documents; its error line is
// returned as failure.
func (r *runner) cursorDocs(ctx context.Context, reply bson.Raw) (docs []bson.Raw, failure string, err error) {
	cur, ok := reply.Lookup("cursor").DocumentOK()
	if !ok {
		return nil, "", fmt.Errorf("reply without cursor: %s", reply)
	}
	for {
		batch, ok := cur.Lookup("firstBatch").ArrayOK()
		if !ok {
			batch, _ = cur.Lookup("nextBatch").ArrayOK()
		}
		vals, err := batch.Values()
		if err != nil {
			return nil, "", err
		}
		for _, v := range vals {
			doc, ok := v.DocumentOK()
			if !ok {
				return nil, "", fmt.Errorf("cursor batch holds a %s", v.Type)
			}
			docs = append(docs, doc)
		}
		id, _ := cur.Lookup("id").AsInt64OK()
		if id == 0 {
			return docs, "", nil
		}
		ns, _ := cur.Lookup("ns").StringValueOK()
		_, collName, _ := strings.Cut(ns, ".")
		next, err := r.b.Command(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: collName}})
		if err != nil {
			return docs, FormatError(err) + "\n", nil
		}
		if cur, ok = next.Lookup("cursor").DocumentOK(); !ok {
			return nil, "", fmt.Errorf("getMore reply without cursor: %s", next)
		}
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

// Command returns the reply of a write command with writeErrors or a
// writeConcernError as a reply, not as the mongo.WriteException the driver
// makes of it, so the runner prints it like any other write reply.
func (d driverBackend) Command(ctx context.Context, cmd bson.D) (bson.Raw, error) {
	reply, err := d.db.RunCommand(ctx, cmd).Raw()
	var we mongo.WriteException
	if errors.As(err, &we) && len(reply) > 0 {
		return reply, nil
	}
	return reply, err
}
