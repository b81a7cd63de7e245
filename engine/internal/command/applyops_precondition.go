package command

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// checkPreconditionOptions rejects a preCondition the command cannot
// honour, as mongod's ApplyOpsCommandInfo does: with allowAtomic false or
// with command entries.
func checkPreconditionOptions(p *applyOpsParams) error {
	if p.preCondition == nil {
		return nil
	}
	if !p.allowAtomic {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot use preCondition with {allowAtomic: false}")
	}
	for _, op := range p.ops {
		if op.Lookup("op").StringValue() == "c" {
			return mongoerr.New(mongoerr.InvalidOptions, "Cannot use preCondition when operations include commands.")
		}
	}
	return nil
}

// checkPreconditions runs each {ns, q, res} of an applyOps preCondition
// before any entry is applied (mongod's _checkPrecondition): the first
// document q finds in ns (an empty document when there is none) must
// match res, a query filter; otherwise the command fails with BadValue
// "preCondition failed", reporting the document as got and the failed
// condition as whatFailed. q may be a filter or a legacy
// {query|$query: filter, orderby|$orderby: sort} wrapper.
func (r *Request) checkPreconditions(ctx context.Context, conds []bson.RawValue) error {
	for _, cv := range conds {
		cond, ok := cv.DocumentOK()
		if !ok {
			return mongoerr.FieldType("applyOps", "preCondition", typeName(cv.Type), "object")
		}
		nsv := cond.Lookup("ns")
		if nsv.Type != bson.TypeString {
			return mongoerr.Newf(mongoerr.InvalidNamespace, "ns in preCondition must be a string, but found type: %s", typeName(nsv.Type))
		}
		ns := nsv.StringValue()
		db, coll, _ := strings.Cut(ns, ".")
		if err := validDBName(db); err != nil || coll == "" || validCollName(db, coll) != nil {
			return mongoerr.Newf(mongoerr.InvalidNamespace, "invalid ns: %s", ns)
		}
		q, ok := cond.Lookup("q").DocumentOK()
		if !ok {
			return mongoerr.FieldType("applyOps", "preCondition.q", typeName(cond.Lookup("q").Type), "object")
		}
		res, ok := cond.Lookup("res").DocumentOK()
		if !ok {
			return mongoerr.FieldType("applyOps", "preCondition.res", typeName(cond.Lookup("res").Type), "object")
		}
		got, err := r.preconditionFindOne(ctx, db, coll, q)
		if err != nil {
			return err
		}
		if len(r.Env.Store.Collections(db)) == 0 {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "database in ns does not exist: %s", ns)
		}
		if r.Env.Store.Collection(ns) == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "collection in ns does not exist: %s", ns)
		}
		f, err := match.Compile(res)
		if err != nil {
			return err
		}
		if !f.Match(got) {
			return mongoerr.New(mongoerr.BadValue, "preCondition failed").With("got", got).With("whatFailed", cond)
		}
	}
	return nil
}

// preconditionFindOne returns the first document of db.coll that the
// legacy query q selects, or an empty document.
func (r *Request) preconditionFindOne(ctx context.Context, db, coll string, q bson.Raw) (bson.Raw, error) {
	filter, sort := q, bson.Raw(nil)
	for _, k := range []string{"query", "$query"} {
		if v := q.Lookup(k); v.Type != 0 {
			d, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.FieldType("applyOps", "preCondition.q."+k, typeName(v.Type), "object")
			}
			filter = d
			for _, s := range []string{"orderby", "$orderby"} {
				if sv, ok := q.Lookup(s).DocumentOK(); ok {
					sort = sv
				}
			}
			break
		}
	}
	cmd := bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: filter}, {Key: "limit", Value: int64(1)}, {Key: "singleBatch", Value: true}}
	if sort != nil {
		cmd = append(cmd, bson.E{Key: "sort", Value: sort})
	}
	reply, err := r.sub(ctx, db, cmd)
	if err != nil {
		return nil, err
	}
	if first, ok := reply.Lookup("cursor", "firstBatch").ArrayOK(); ok {
		if vals, err := first.Values(); err == nil && len(vals) > 0 {
			if d, ok := vals[0].DocumentOK(); ok {
				return d, nil
			}
		}
	}
	return bson.Raw{5, 0, 0, 0, 0}, nil
}
