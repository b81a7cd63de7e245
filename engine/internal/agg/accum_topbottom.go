package agg

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
)

func init() {
	for _, n := range []string{"$top", "$bottom", "$topN", "$bottomN"} {
		registerAccum(n, parseTopBottom)
	}
}

// parseTopBottom parses {$top|$bottom: {sortBy, output}} and
// {$topN|$bottomN: {n, sortBy, output}}: 5788001 for a non-document,
// 5788002 an unknown field, 5788003 no n, 5788004 no output, 5788005 no
// sortBy, then the sort specification's codes.
func parseTopBottom(pc *parseCtx, name string, arg bson.RawValue, d *expr.Deps) (func(c *expr.Ctx) (accumulator, error), error) {
	doc, ok := arg.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(5788001), "specification must be an object; found %s", showValue(arg))
	}
	single := name == "$top" || name == "$bottom"
	var nE, outE expr.Expr
	var sortBy bson.Raw
	for _, el := range mustElems(doc) {
		var err error
		switch {
		case el.Key() == "n" && !single:
			nE, err = pc.parseExpr(el.Value(), nil)
		case el.Key() == "output":
			outE, err = pc.parseExpr(el.Value(), d)
		case el.Key() == "sortBy":
			sd, ok := el.Value().DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.TypeMismatch, "expected sortBy to be an object")
			}
			sortBy = sd
		default:
			return nil, mongoerr.Newf(mongoerr.Code(5788002), "Unknown argument to %s '%s'", name, el.Key())
		}
		if err != nil {
			return nil, err
		}
	}
	if single {
		nE = expr.Const(expr.Int32(1))
	} else if nE == nil {
		return nil, mongoerr.New(mongoerr.Code(5788003), "Missing value for 'n'")
	}
	if outE == nil {
		return nil, mongoerr.New(mongoerr.Code(5788004), "Missing value for 'output'")
	}
	if sortBy == nil {
		return nil, mongoerr.New(mongoerr.Code(5788005), "Missing value for 'sortBy'")
	}
	if len(mustElems(sortBy)) == 0 {
		return nil, mongoerr.New(mongoerr.Code(9657900), "Value for 'sortBy' must be a non-empty object")
	}
	ord, err := order.Compile(sortBy)
	if err != nil {
		return nil, err
	}
	d.Whole = true
	bottom := name == "$bottom" || name == "$bottomN"
	return func(c *expr.Ctx) (accumulator, error) {
		n, err := evalN(c, nE)
		if err != nil {
			return nil, err
		}
		o := ord
		if c != nil && c.Collation != nil {
			o = ord.WithCollation(c.Collation)
		}
		return &groupTop{name: name, n: n, single: single, bottom: bottom, ord: o, out: outE}, nil
	}, nil
}

// groupTop is $top, $bottom, $topN and $bottomN: the output of the first
// (or last) n documents under sortBy; ties keep input order.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/topN/
type groupTop struct {
	name           string
	n              int64
	single, bottom bool
	ord            *order.Order
	out            expr.Expr
	rows           []topRow
	seq            int64
	bytes          int64
}

type topRow struct {
	key order.Key
	v   bson.RawValue
	seq int64
}

// less orders rows as the result lists them.
func (a *groupTop) less(x, y topRow) bool {
	c := a.ord.CompareKeys(x.key, y.key)
	if c != 0 {
		return c < 0
	}
	return x.seq < y.seq
}

func (a *groupTop) process(c *expr.Ctx) error {
	doc, _ := c.Get(expr.SlotRoot).DocumentOK()
	k, err := a.ord.Key(doc)
	if err != nil {
		return err
	}
	v, err := a.out.Eval(c)
	if err != nil {
		return err
	}
	if v.Type == 0 {
		v = expr.Null()
	}
	// Keys alias the document; keep copies of what stays.
	kc := make(order.Key, len(k))
	for i, kv := range k {
		kc[i] = bson.RawValue{Type: kv.Type, Value: append([]byte(nil), kv.Value...)}
	}
	return a.insert(topRow{key: kc, v: v, seq: a.seq})
}

func (a *groupTop) insert(r topRow) error {
	a.seq++
	r.seq = a.seq
	i := sort.Search(len(a.rows), func(i int) bool { return a.less(r, a.rows[i]) })
	if !a.bottom {
		if int64(i) >= a.n {
			return nil
		}
	}
	a.rows = append(a.rows, topRow{})
	copy(a.rows[i+1:], a.rows[i:])
	a.rows[i] = r
	a.bytes += valueSize(r.v) + 32
	if int64(len(a.rows)) > a.n {
		drop := len(a.rows) - 1
		if a.bottom {
			drop = 0
		}
		a.bytes -= valueSize(a.rows[drop].v) + 32
		a.rows = append(a.rows[:drop], a.rows[drop+1:]...)
	}
	if a.bytes > maxNBytes {
		return mongoerr.Newf(mongoerr.ExceededMemoryLimit, "%s used too much memory and cannot spill to disk. Memory limit: %d bytes", a.name, maxNBytes)
	}
	return nil
}

func (a *groupTop) result() (bson.RawValue, error) {
	if a.single {
		if len(a.rows) == 0 {
			return expr.Null(), nil
		}
		return a.rows[0].v, nil
	}
	vals := make([]bson.RawValue, len(a.rows))
	for i, r := range a.rows {
		vals[i] = r.v
	}
	return expr.Array(vals), nil
}

// partial encodes rows as [[key...], value] pairs.
func (a *groupTop) partial() (bson.RawValue, error) {
	rows := make([]bson.RawValue, len(a.rows))
	for i, r := range a.rows {
		rows[i] = expr.Array([]bson.RawValue{expr.Array(r.key), r.v})
	}
	return expr.Array(rows), nil
}

func (a *groupTop) merge(p bson.RawValue) error {
	for _, rv := range expr.Values(p) {
		pair := expr.Values(rv)
		if len(pair) != 2 {
			return mongoerr.New(mongoerr.InternalError, "bad partial top")
		}
		if err := a.insert(topRow{key: order.Key(expr.Values(pair[0])), v: pair[1]}); err != nil {
			return err
		}
	}
	return nil
}

func (a *groupTop) memory() int64 { return a.bytes }
