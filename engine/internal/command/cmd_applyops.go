package command

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("applyOps", &spec{run: runApplyOps, help: "apply oplog entries: inserts, updates, deletes and commands"})
}

// Codes applyOps uses besides the named ones.
const (
	errApplyOpsUUIDMismatch mongoerr.Code = 3318200 // ns and ui name different collections
	errApplyOpsDropDatabase mongoerr.Code = 6275900 // dropDatabase not alone
)

// maxApplyOpsDepth bounds applyOps entries nested in applyOps commands.
const maxApplyOpsDepth = 10

// applyOpsDepthKey carries the nesting depth of applyOps through the
// internal dispatch of nested applyOps commands.
type applyOpsDepthKey struct{}

// applyOpsParams is a parsed applyOps command.
type applyOpsParams struct {
	ops          []bson.Raw
	alwaysUpsert bool
	allowAtomic  bool
	// preCondition holds the {ns, q, res} conditions checked before any
	// entry is applied (applyops_precondition.go).
	preCondition []bson.RawValue
}

// runApplyOps applies oplog entries one by one, as mongod's applyOps does
// on a replica set primary (non-atomically, as 7.0 does). Each applied
// entry adds true or false to results; an entry that fails with an
// error stops the command, with the entries applied so far, and an
// update or insert that fails softly (an update matching nothing) makes
// the command answer UnknownError after applying the rest.
//
// Supported entries: i (an insert; an existing _id makes it a replacement
// upsert), u (an update of o2's _id with a replacement, update operators
// or a $v: 2 diff), d (a delete by _id; no document or collection is
// fine), n (skipped) and c (create, drop, createIndexes, dropIndexes,
// collMod, renameCollection, dropDatabase alone, nested applyOps).
//
// A preCondition is checked before any entry is applied
// (checkPreconditions).
//
// Divergence: alwaysUpsert defaults to false as in the newest servers.
// https://www.mongodb.com/docs/v7.0/reference/command/applyOps/
func runApplyOps(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseApplyOps(r)
	if err != nil {
		return nil, err
	}
	depth, _ := ctx.Value(applyOpsDepthKey{}).(int)
	if depth >= maxApplyOpsDepth {
		return nil, mongoerr.Newf(mongoerr.BadValue, "applyOps nested more than %d levels deep", maxApplyOpsDepth)
	}
	ctx = context.WithValue(ctx, applyOpsDepthKey{}, depth+1)
	if err := r.checkPreconditions(ctx, p.preCondition); err != nil {
		return nil, err
	}
	for _, op := range p.ops {
		if op.Lookup("op").StringValue() == "c" && firstKey(op.Lookup("o")) == "dropDatabase" && len(p.ops) != 1 {
			return nil, mongoerr.New(errApplyOpsDropDatabase, "dropDatabase in an applyOps must be the only entry")
		}
	}
	applied, softErrors := 0, 0
	results := bson.A{}
	for _, op := range p.ops {
		if op.Lookup("op").StringValue() == "n" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, ctxErr(err)
		}
		ok, err := r.applyOp(ctx, op, p.alwaysUpsert)
		if err != nil {
			me := mongoerr.As(err)
			results = append(results, false)
			applied++
			return nil, me.With("applied", int32(applied)).With("results", results)
		}
		results = append(results, ok)
		if !ok {
			softErrors++
		}
		applied++
	}
	if softErrors > 0 {
		return nil, mongoerr.New(mongoerr.UnknownError, "applyOps had one or more errors applying ops").
			With("applied", int32(applied)).With("results", results)
	}
	return bson.D{{Key: "applied", Value: int32(applied)}, {Key: "results", Value: results}}, nil
}

// parseApplyOps reads the command and checks every entry's shape, as
// mongod's OplogApplicationChecks do before anything is applied.
func parseApplyOps(r *Request) (*applyOpsParams, error) {
	p := &applyOpsParams{allowAtomic: true}
	first := r.Body.Index(0).Value()
	arr, ok := first.ArrayOK()
	if !ok {
		return nil, mongoerr.FieldType("applyOps", "applyOps", typeName(first.Type), "array")
	}
	err := fields("applyOps", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "alwaysUpsert", "allowAtomic", "bypassDocumentValidation":
			b, ok := v.BooleanOK()
			if !ok {
				return mongoerr.FieldType("applyOps", k, typeName(v.Type), "bool")
			}
			switch k {
			case "alwaysUpsert":
				p.alwaysUpsert = b
			case "allowAtomic":
				p.allowAtomic = b
			}
		case "preCondition":
			a, ok := v.ArrayOK()
			if !ok {
				return mongoerr.FieldType("applyOps", k, typeName(v.Type), "array")
			}
			vals, _ := a.Values()
			p.preCondition = append([]bson.RawValue{}, vals...)
		case "prepare":
			return mongoerr.New(mongoerr.BadValue, "applyOps command can't have 'prepare' field")
		case "partialTxn":
			return mongoerr.New(31056, "applyOps command can't have 'partialTxn' field.")
		case "count":
			return mongoerr.New(31240, "applyOps command can't have 'count' field.")
		default:
			// The command's IDL is not strict: unknown fields are ignored.
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	vals, _ := arr.Values()
	for i, v := range vals {
		op, err := checkOplogEntry(fmt.Sprint(i), v, 0)
		if err != nil {
			return nil, err
		}
		p.ops = append(p.ops, op)
	}
	if err := checkPreconditionOptions(p); err != nil {
		return nil, err
	}
	return p, nil
}

// checkOplogEntry checks one entry's op, ns and o fields (and o2 of an
// update), recursing into nested applyOps.
func checkOplogEntry(name string, v bson.RawValue, depth int) (bson.Raw, error) {
	op, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "op not an object: %s", name)
	}
	t := op.Lookup("op")
	switch {
	case t.Type == 0:
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "op does not contain required \"op\" field: %s", name)
	case t.Type != bson.TypeString:
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "\"op\" field is not a string: %s", name)
	case t.StringValue() == "":
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "\"op\" field value cannot be empty: %s", name)
	}
	kind := t.StringValue()
	ns := op.Lookup("ns")
	switch {
	case ns.Type == 0:
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "op does not contain required \"ns\" field: %s", name)
	case ns.Type != bson.TypeString:
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "\"ns\" field is not a string: %s", name)
	case ns.StringValue() == "" && kind != "n":
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "\"ns\" field value cannot be empty when op type is not 'n': %s", name)
	}
	o := op.Lookup("o")
	switch {
	case o.Type == 0:
		return nil, mongoerr.Newf(mongoerr.NoSuchKey, "op does not contain required \"o\" field: %s", name)
	case o.Type != bson.TypeEmbeddedDocument:
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "\"o\" field is not an object: %s", name)
	}
	if kind == "u" {
		o2 := op.Lookup("o2")
		switch {
		case o2.Type == 0:
			return nil, mongoerr.Newf(mongoerr.NoSuchKey, "op does not contain required \"o2\" field: %s", name)
		case o2.Type != bson.TypeEmbeddedDocument:
			return nil, mongoerr.Newf(mongoerr.TypeMismatch, "\"o2\" field is not an object: %s", name)
		}
	}
	if kind == "c" && firstKey(o) == "applyOps" {
		if depth >= maxApplyOpsDepth {
			return nil, mongoerr.Newf(mongoerr.BadValue, "applyOps nested more than %d levels deep", maxApplyOpsDepth)
		}
		inner, ok := o.Document().Index(0).Value().ArrayOK()
		if !ok {
			return nil, mongoerr.FieldType("applyOps", "applyOps", typeName(o.Document().Index(0).Value().Type), "array")
		}
		vals, _ := inner.Values()
		for i, v := range vals {
			if _, err := checkOplogEntry(fmt.Sprint(i), v, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return op, nil
}

// firstKey returns the first field name of a document value, or "".
func firstKey(v bson.RawValue) string {
	d, ok := v.DocumentOK()
	if !ok {
		return ""
	}
	e, err := d.IndexErr(0)
	if err != nil {
		return ""
	}
	return e.Key()
}

// applyOp applies one entry. ok=false is a soft failure (mongod's returned
// status); err stops the command (mongod's exception).
func (r *Request) applyOp(ctx context.Context, op bson.Raw, alwaysUpsert bool) (bool, error) {
	kind := op.Lookup("op").StringValue()
	ns := op.Lookup("ns").StringValue()
	o := op.Lookup("o").Document()
	db, coll, _ := strings.Cut(ns, ".")
	if kind == "c" {
		return true, r.applyCommandOp(ctx, db, o)
	}
	if kind != "i" && kind != "u" && kind != "d" {
		return false, mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field 'applyOps.op' is not a valid value.", kind)
	}
	if err := validDBName(db); err != nil || coll == "" || validCollName(db, coll) != nil {
		return false, mongoerr.Newf(mongoerr.InvalidNamespace, "invalid ns: %s", ns)
	}
	c := r.Env.Store.Collection(ns)
	if ui := op.Lookup("ui"); ui.Type != 0 {
		sub, data, ok := ui.BinaryOK()
		if !ok || sub != bson.TypeBinaryUUID || len(data) != 16 || c == nil || string(c.UUID[:]) != string(data) {
			return false, mongoerr.Newf(errApplyOpsUUIDMismatch, "Namespace '%s' and UUID '%s' point to different collections", ns, formatValue(ui))
		}
	}
	if c == nil {
		if kind == "d" {
			return true, nil // idempotent, as mongod
		}
		return false, mongoerr.Newf(mongoerr.NamespaceNotFound, "cannot apply insert or update operation on a non-existent namespace %s: %s", ns, formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: op}))
	}
	switch kind {
	case "i":
		return r.applyInsert(ctx, db, coll, o)
	case "u":
		upsert := alwaysUpsert
		if b, ok := op.Lookup("b").BooleanOK(); ok && b {
			upsert = true
		}
		return r.applyUpdate(ctx, db, coll, op.Lookup("o2").Document(), o, upsert)
	default:
		id := o.Lookup("_id")
		if id.Type == 0 {
			return false, mongoerr.Newf(mongoerr.NoSuchKey, "Failed to apply delete due to missing _id: %s", formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: op}))
		}
		_, err := r.subWrite(ctx, db, bson.D{{Key: "delete", Value: coll}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "limit", Value: 1}}}}})
		return err == nil, err
	}
}

// applyInsert inserts o; an existing _id turns it into a replacement
// upsert, as mongod's oplog application does.
func (r *Request) applyInsert(ctx context.Context, db, coll string, o bson.Raw) (bool, error) {
	id := o.Lookup("_id")
	if id.Type == 0 {
		return false, mongoerr.Newf(mongoerr.NoSuchKey, "Failed to apply insert due to missing _id: %s", formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: o}))
	}
	_, err := r.subWrite(ctx, db, bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: bson.A{o}}})
	if !mongoerr.Is(err, mongoerr.DuplicateKey) {
		return err == nil, err
	}
	_, err = r.subWrite(ctx, db, bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "u", Value: o}, {Key: "upsert", Value: true},
	}}}})
	return err == nil, err
}

// applyUpdate applies an update entry to the document o2 names.
func (r *Request) applyUpdate(ctx context.Context, db, coll string, o2, o bson.Raw, upsert bool) (bool, error) {
	if o2.Lookup("_id").Type == 0 {
		return false, mongoerr.Newf(mongoerr.NoSuchKey, "Failed to apply update due to missing _id: %s", formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: o2}))
	}
	u, err := oplogUpdate(o, o2.Lookup("_id"))
	if err != nil {
		return false, err
	}
	reply, err := r.subWrite(ctx, db, bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: o2}, {Key: "u", Value: u}, {Key: "upsert", Value: upsert},
	}}}})
	if err != nil {
		return false, err
	}
	n, _ := asInt(reply.Lookup("n"))
	return n > 0, nil
}

// subWrite runs a write command internally and returns its reply; the
// first write error becomes the error.
func (r *Request) subWrite(ctx context.Context, db string, cmd bson.D) (bson.Raw, error) {
	reply, err := r.sub(ctx, db, cmd)
	if err != nil {
		return nil, err
	}
	if we, ok := reply.Lookup("writeErrors").ArrayOK(); ok {
		vals, _ := we.Values()
		if len(vals) > 0 {
			d := vals[0].Document()
			code, _ := asInt(d.Lookup("code"))
			me := mongoerr.New(mongoerr.Code(code), d.Lookup("errmsg").StringValue())
			return nil, me
		}
	}
	return reply, nil
}

// sub runs cmd against db through the command table, as a client would.
func (r *Request) sub(ctx context.Context, db string, cmd bson.D) (bson.Raw, error) {
	body, err := bson.Marshal(append(cmd, bson.E{Key: "$db", Value: db}))
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.BadValue, "applyOps: cannot encode %v", err)
	}
	reply, err := r.Env.dispatch(ctx, r.Conn, body)
	if err != nil {
		return nil, err
	}
	out, err := bson.Marshal(reply)
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.InternalError, "applyOps: cannot encode reply: %v", err)
	}
	return out, nil
}
