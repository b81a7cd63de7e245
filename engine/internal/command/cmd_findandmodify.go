package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/projection"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("findAndModify", &spec{run: runFindAndModify, write: true, apiV1: true, help: "modify or remove one document and return it"})
}

// findAndModifyParams are the fields of a findAndModify command, with the
// update and projection compiled.
type findAndModifyParams struct {
	ns                           string
	filter, sortSpec, fieldsSpec bson.Raw
	upd                          bson.RawValue
	arrayFilters                 []bson.Raw
	remove, returnNew, upsert    bool
	hint                         bson.RawValue
	let                          bson.Raw               // evaluated
	u                            updater                // nil for remove
	proj                         *projection.Projection // nil for none
	collation                    bson.RawValue
}

// parseFindAndModify parses a findAndModify command's fields and
// compiles its update and projection.
func parseFindAndModify(r *Request) (*findAndModifyParams, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	p := &findAndModifyParams{ns: r.DB + "." + name}
	if err := r.Env.notOnView(r.Name, p.ns); err != nil {
		return nil, err
	}
	err = fields("findAndModify", r.Body, func(k string, v bson.RawValue) error {
		var err error
		if v.Type == bson.TypeNull && (k == "query" || k == "sort" || k == "fields") {
			return nil // null means none, as mongod's IDL parser reads it
		}
		switch k {
		case "query":
			p.filter, err = wantDoc("findAndModify", k, v)
		case "sort":
			p.sortSpec, err = wantDoc("findAndModify", k, v)
		case "fields":
			p.fieldsSpec, err = wantDoc("findAndModify", k, v)
		case "remove":
			p.remove, err = wantSafeBool("findAndModify", k, v)
		case "update":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
				return mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
			}
			p.upd = v
		case "new":
			p.returnNew, err = wantSafeBool("findAndModify", k, v)
		case "upsert":
			p.upsert, err = wantSafeBool("findAndModify", k, v)
		case "arrayFilters":
			p.arrayFilters, err = docArray("findAndModify", k, v)
		case "hint":
			p.hint = v
		case "collation":
			p.collation = v
			err = checkCollation(v)
		case "bypassDocumentValidation":
			r.bypassValidation, err = wantSafeBool("findAndModify", k, v)
		case "let":
			p.let, err = r.parseLet("findAndModify", v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case p.remove && p.upd.Type != 0:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both an update and remove=true")
	case !p.remove && p.upd.Type == 0:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Either an update or remove=true must be specified")
	case p.remove && p.upsert:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both upsert=true and remove=true ")
	case p.remove && p.returnNew:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
	case p.remove && len(p.arrayFilters) > 0:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify arrayFilters and remove=true")
	}
	if err := checkWritable(r.DB, name); err != nil {
		return nil, err
	}
	var ce match.Env
	if err := r.stmtCollation(r.Env.Store.Collection(p.ns), p.collation, &ce); err != nil {
		return nil, err
	}
	if p.let, err = r.letWithCollation(p.let, ce.Collation); err != nil {
		return nil, err
	}
	p.filter = orEmpty(p.filter) // no query matches every document, and upserts from {}
	if !p.remove {
		if p.u, err = compileUpdate(p.upd, p.arrayFilters, p.let, r.start, r.Env.clock.current()); err != nil {
			return nil, err
		}
	}
	if len(p.fieldsSpec) > 5 {
		if p.proj, err = projection.CompileEnv(p.fieldsSpec, r.matchEnv(p.let)); err != nil {
			return nil, err
		}
		if err := validateProjection(p.proj, p.filter); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// query compiles p's filter, sort and hint against coll (nil: the
// collection does not exist); findAndModify selects one document.
func (p *findAndModifyParams) query(r *Request, coll *storage.Collection, env match.Env) (*query, error) {
	if err := r.stmtCollation(coll, p.collation, &env); err != nil {
		return nil, err
	}
	q := &query{coll: coll, limit: 1, hint: p.hint}
	if err := q.setFilter(p.filter, env); err != nil {
		return nil, err
	}
	if err := q.setSort(p.sortSpec); err != nil {
		return nil, err
	}
	return q, q.resolveHint()
}

// runFindAndModify updates or removes the first matching document in sort
// order and returns it (before or after the change).
// https://www.mongodb.com/docs/manual/reference/command/findAndModify/
func runFindAndModify(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseFindAndModify(r)
	if err != nil {
		return nil, err
	}
	ns := p.ns
	if p.upsert {
		if err := checkDBCase(r.Env.Store, r.DB); err != nil {
			return nil, err
		}
	}
	remove, returnNew, upsert, u, proj, filter := p.remove, p.returnNew, p.upsert, p.u, p.proj, p.filter
	var (
		value    bson.Raw
		leo      bson.D
		filterer *query
	)
	err = r.write(ctx, func(w *storage.Writer) error {
		value, leo = nil, nil // an attempt that waited runs again
		q, err := p.query(r, w.Collection(ns), r.matchEnv(p.let))
		if err != nil {
			return err
		}
		filterer = q
		if u != nil {
			u = updaterWithCollation(u, q.collation)
		}
		if proj != nil && q.collation != nil {
			// The projection was checked at parse time; its expressions
			// and $elemMatch compare under the statement's collation.
			env := r.matchEnv(p.let)
			env.Collation = q.collation
			if proj, err = projection.CompileEnv(p.fieldsSpec, env); err != nil {
				return err
			}
		}
		var found *row
		if q.coll != nil {
			rows, err := q.rows(ctx, w.Reader(), r.queryEnv())
			if err != nil {
				return err
			}
			rw, ok, err := rows.next(ctx)
			rows.close()
			if err != nil {
				return err
			}
			if ok {
				found = &rw
			}
		}
		now := time.Now()
		switch {
		case found != nil && remove:
			if err := w.Delete(q.coll, found.rid, found.doc); err != nil {
				return err
			}
			value = found.doc
			leo = bson.D{{Key: "n", Value: int32(1)}}
		case found != nil:
			out, _, err := r.updateRow(ctx, w, q, u, *found, now)
			if err != nil {
				return err
			}
			value = found.doc
			if returnNew {
				value = out
			}
			leo = bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: true}}
		case upsert:
			doc, err := r.insertUpsert(ctx, w, ns, u, filter, now)
			if err != nil {
				return err
			}
			if returnNew {
				value = doc
			}
			leo = bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: false}, {Key: "upserted", Value: doc.Lookup("_id")}}
		default:
			leo = bson.D{{Key: "n", Value: int32(0)}}
			if !remove {
				leo = append(leo, bson.E{Key: "updatedExisting", Value: false})
			}
		}
		return nil
	})
	if err != nil {
		return nil, writeErr(err)
	}
	var v any
	if value != nil {
		if proj != nil {
			if value, err = proj.Apply(value, filterer.filter); err != nil {
				return nil, err
			}
		}
		v = value
	}
	reply := bson.D{{Key: "lastErrorObject", Value: leo}, {Key: "value", Value: v}}
	if wce := r.Generic.WriteConcern.concernError(); wce != nil {
		reply = append(reply, bson.E{Key: "writeConcernError", Value: wce})
	}
	return reply, nil
}

// validateProjection checks a positional projection against the filter it
// runs with.
func validateProjection(p *projection.Projection, filter bson.Raw) error {
	f, err := match.Compile(orEmpty(filter))
	if err != nil {
		return err
	}
	return p.Validate(f)
}

// wantSafeBool parses a field of the IDL type safeBool (a boolean or a
// number), with the IDL's error listing the types it takes.
func wantSafeBool(cmd, field string, v bson.RawValue) (bool, error) {
	b, ok := asBool(v)
	if !ok {
		return false, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[bool, long, int, decimal, double]'", cmd, field, typeName(v.Type))
	}
	return b, nil
}
