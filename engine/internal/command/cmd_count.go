package command

import (
	"context"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("count", &spec{run: runCount, apiV1: true, help: "count matching documents"})
	register("distinct", &spec{run: runDistinct, help: "distinct values of a field"})
}

// countParams are the fields of a count command.
type countParams struct {
	ns          string
	filter      bson.Raw
	skip, limit int64
	hint        bson.RawValue
	collation   collationArg
}

// parseCount parses a count command's fields.
func parseCount(r *Request) (*countParams, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	p := &countParams{ns: r.DB + "." + name}
	err = fields("count", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "query":
			if v.Type == bson.TypeNull {
				return nil
			}
			p.filter, err = wantDoc("count", k, v)
		case "limit":
			// A negative limit counts like its absolute value.
			n, ok := asInt(v)
			if !ok {
				return mongoerr.FieldType("count", k, typeName(v.Type), "long")
			}
			if n < 0 {
				n = -n
			}
			p.limit = n
		case "skip":
			p.skip, err = wantNonNegative("count", k, v)
		case "hint":
			p.hint = v
		case "collation":
			p.collation, err = r.parseCollationArg(v)
		case "fields", "readConcern", "query_settings":
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// query compiles p's filter and hint against the collection as it is now.
func (p *countParams) query(r *Request) (*query, error) {
	q := &query{coll: r.Env.Store.Collection(p.ns), skip: p.skip, limit: p.limit, hint: p.hint, count: true}
	env := r.matchEnv(nil)
	env.Collation = r.collationFor(q.coll, p.collation)
	if err := q.setFilter(p.filter, env); err != nil {
		return nil, err
	}
	return q, q.resolveHint()
}

// runCount counts documents matching query, after skip and up to limit.
// https://www.mongodb.com/docs/manual/reference/command/count/
func runCount(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseCount(r)
	if err != nil {
		return nil, err
	}
	if r.Env.view(p.ns) != nil {
		return r.countOnView(ctx, p)
	}
	q, err := p.query(r)
	if err != nil {
		return nil, err
	}
	snap := r.snapshot(q)
	defer snap.Close()
	rows, err := q.rows(ctx, snap, r.queryEnv())
	if err != nil {
		return nil, err
	}
	defer rows.close()
	var n, skipped int64
	for q.limit == 0 || n < q.limit {
		_, ok, err := rows.next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if skipped < q.skip {
			skipped++
			continue
		}
		n++
	}
	return bson.D{{Key: "n", Value: int32OrLong(n)}}, nil
}

// countWindow splits n matching documents into those a count with skip
// and limit (0: none) counts and those it skips, as mongod's COUNT stage
// reports them (nCounted, nSkipped).
func countWindow(n, skip, limit int64) (counted, skipped int64) {
	skipped = min(n, skip)
	counted = n - skipped
	if limit > 0 && counted > limit {
		counted = limit
	}
	return counted, skipped
}

func int32OrLong(n int64) any {
	if n == int64(int32(n)) {
		return int32(n)
	}
	return n
}

// distinctParams are the fields of a distinct command.
type distinctParams struct {
	ns        string
	key       string
	filter    bson.Raw
	hint      bson.RawValue
	collation collationArg
}

// parseDistinct parses a distinct command's fields.
func parseDistinct(r *Request) (*distinctParams, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	p := &distinctParams{ns: r.DB + "." + name}
	hasKey := false
	err = fields("distinct", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "key":
			p.key, err = wantString("distinct", k, v)
			hasKey = true
		case "query":
			if v.Type == bson.TypeNull {
				return nil
			}
			p.filter, err = wantDoc("distinct", k, v)
		case "hint":
			p.hint = v
		case "collation":
			p.collation, err = r.parseCollationArg(v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !hasKey {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'distinct.key' is missing but a required field")
	}
	if p.key == "" {
		return nil, mongoerr.New(mongoerr.Code(40352), "FieldPath cannot be constructed with empty string")
	}
	if strings.HasPrefix(p.key, "$") {
		return nil, mongoerr.Newf(mongoerr.Code(16410), "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	}
	return p, nil
}

// query compiles p's filter and hint against the collection as it is now.
func (p *distinctParams) query(r *Request) (*query, error) {
	q := &query{coll: r.collection(p.ns), hint: p.hint, distinct: p.key}
	// mongod plans a distinct as a find projecting the key alone.
	q.projSpec, _ = bson.Marshal(bson.D{{Key: "_id", Value: 0}, {Key: p.key, Value: 1}})
	env := r.matchEnv(nil)
	env.Collation = r.collationFor(q.coll, p.collation)
	if err := q.setFilter(p.filter, env); err != nil {
		return nil, err
	}
	return q, q.resolveHint()
}

// runDistinct returns the distinct values of key among matching documents,
// array elements counted one by one, in BSON order.
// https://www.mongodb.com/docs/manual/reference/command/distinct/
func runDistinct(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseDistinct(r)
	if err != nil {
		return nil, err
	}
	if r.Env.view(p.ns) != nil {
		return r.distinctOnView(ctx, p)
	}
	q, err := p.query(r)
	if err != nil {
		return nil, err
	}
	snap := r.snapshot(q)
	defer snap.Close()
	rows, err := q.rows(ctx, snap, r.queryEnv())
	if err != nil {
		return nil, err
	}
	defer rows.close()
	var vals []bson.RawValue
	path := strings.Split(p.key, ".")
	pr, _ := rows.(*planRows)
	for {
		rw, ok, err := rows.next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		had := len(vals)
		collectDistinct(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: rw.doc}, path, &vals)
		if pr != nil && pr.x.DistinctScan() {
			if key, ok := pr.x.DistinctKey(p.key); ok {
				// The row stands for its key's value only: keep the
				// document's values equal to it (they keep their BSON
				// types, which keys do not), or the key's value when none
				// is (null for a missing path, as mongod answers).
				vals = keepEqual(vals, had, key)
				continue
			}
		}
		if len(vals) == had && pr != nil && pr.x.DistinctScan() {
			// A DISTINCT_SCAN answers from the index key: null for a
			// document lacking the path, undefined for an empty array.
			// So mongod includes null where a collection scan would not
			// (SERVER-14832), and the key stands for every document
			// sharing it, which the scan skips.
			if v, err := pr.x.ReturnKey().LookupErr(p.key); err == nil {
				vals = append(vals, v)
			}
		}
	}
	cmp := func(a, b bson.RawValue) int { return bsonkit.CompareWith(a, b, q.collation) }
	slices.SortStableFunc(vals, cmp)
	out := bson.A{}
	for i, v := range vals {
		if i > 0 && cmp(vals[i-1], v) == 0 {
			continue
		}
		out = append(out, v)
	}
	return bson.D{{Key: "values", Value: out}}, nil
}

// keepEqual keeps, of vals[from:], the values equal to key under BSON
// comparison, and appends key when none is.
func keepEqual(vals []bson.RawValue, from int, key bson.RawValue) []bson.RawValue {
	out := vals[:from]
	for _, v := range vals[from:] {
		if bsonkit.Compare(v, key) == 0 {
			out = append(out, v)
		}
	}
	if len(out) == from {
		out = append(out, key)
	}
	return out
}

// collectDistinct appends the values at path below v, traversing arrays
// of documents along the way and spreading a final array into its
// elements, as distinct does.
func collectDistinct(v bson.RawValue, path []string, out *[]bson.RawValue) {
	if len(path) == 0 {
		if v.Type == bson.TypeArray {
			vals, _ := v.Array().Values()
			*out = append(*out, vals...)
			return
		}
		*out = append(*out, v)
		return
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		f, err := v.Document().LookupErr(path[0])
		if err != nil {
			return
		}
		collectDistinct(f, path[1:], out)
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		if isIndex(path[0]) {
			if f, err := bson.Raw(v.Array()).LookupErr(path[0]); err == nil {
				collectDistinct(f, path[1:], out)
				return
			}
		}
		for _, e := range vals {
			if e.Type == bson.TypeEmbeddedDocument {
				collectDistinct(e, path, out)
			}
		}
	}
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
