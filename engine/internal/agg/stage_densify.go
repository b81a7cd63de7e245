package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$densify", 0, parseDensify) }

// DefaultDensifyDocs is mongod's internalQueryMaxAllowedDensifyDocs: the
// most documents one $densify may generate.
const DefaultDensifyDocs = 500000

// densifyBounds says which range $densify fills.
type densifyBounds uint8

const (
	densifyExplicit  densifyBounds = iota // [lo, hi)
	densifyFull                           // from the least to the greatest value of all documents
	densifyPartition                      // from the least to the greatest value of each partition
)

// stageDensify is {$densify: {field, partitionByFields, range: {step,
// unit, bounds}}}. It sorts by the partition fields (not for "full"
// bounds) and the field, then adds a document for each step the input
// lacks.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/densify/
type stageDensify struct {
	spec   bson.Raw
	field  string
	path   []string
	parts  []string
	step   bson.RawValue
	unit   string
	bounds densifyBounds
	lo, hi bson.RawValue
	sort   stage

	// Arithmetic by $add and $subtract semantics, over two variables.
	add, sub, mod expr.Expr
	slotA, slotB  int
	fieldExpr     expr.Expr
	partExprs     []expr.Expr
	scope         *expr.Scope
}

// parseDensify parses the stage as DensifySpec and RangeStatement::parse
// do: the IDL codes, then 5733401 (step), 6586400 (date step), the bounds
// codes 5733402–5733410, 5876900, 5946800, 5946802, and 5733408
// (partition bounds without partitionByFields).
func parseDensify(pc *parseCtx, spec bson.RawValue) (stage, error) {
	const name = "$densify"
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, failedToParse("The $densify stage specification must be an object, found %s", typeNameOf(spec))
	}
	doc := spec.Document()
	var field, parts, rng *bson.RawValue
	for _, el := range mustElems(doc) {
		v := el.Value()
		var dst **bson.RawValue
		switch el.Key() {
		case "field":
			if v.Type != bson.TypeString {
				return nil, idlType(name, "field", v, "string")
			}
			dst = &field
		case "partitionByFields":
			if v.Type != bson.TypeArray {
				return nil, idlType(name, "partitionByFields", v, "array")
			}
			for i, f := range bsonkit.Values(v.Value) {
				if f.Type != bson.TypeString {
					return nil, idlType(name, "partitionByFields."+itoaWin(i), f, "string")
				}
			}
			dst = &parts
		case "range":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, idlType(name, "range", v, "object")
			}
			dst = &rng
		default:
			return nil, idlUnknown(name, el.Key())
		}
		if *dst != nil {
			return nil, idlDuplicate(name, el.Key())
		}
		*dst = &v
	}
	if field == nil {
		return nil, idlMissing(name, "field")
	}
	if rng == nil {
		return nil, idlMissing(name, "range")
	}
	s := &stageDensify{spec: doc}
	if err := s.parseRange(rng.Document()); err != nil {
		return nil, err
	}
	s.field = field.StringValue()
	if err := checkFieldPath(s.field); err != nil {
		return nil, err
	}
	s.path = strings.Split(s.field, ".")
	if parts != nil {
		for _, f := range bsonkit.Values(parts.Value) {
			if err := checkFieldPath(f.StringValue()); err != nil {
				return nil, err
			}
			s.parts = append(s.parts, f.StringValue())
		}
	}
	if s.bounds == densifyPartition && len(s.parts) == 0 {
		return nil, mongoerr.New(mongoerr.Code(5733408), "One cannot specify the bounds as 'partition' without specifying a non-empty array of partitionByFields. You may have meant to specify 'full' bounds.")
	}
	return s, s.compile(pc)
}

// itoaWin formats an index for IDL messages.
func itoaWin(i int) string { return numString(expr.Int64(int64(i))) }

// checkFieldPath applies FieldPath's rules to a field name: 40352 when
// empty, 15998 for an empty component, 16410 for a '$' prefix.
func checkFieldPath(p string) error {
	if p == "" {
		return mongoerr.New(mongoerr.Code(40352), "FieldPath cannot be constructed with empty string")
	}
	for _, part := range strings.Split(p, ".") {
		if err := expr.ValidateFieldName(part); err != nil {
			return err
		}
	}
	return nil
}

func (s *stageDensify) parseRange(r bson.Raw) error {
	const name = "$densify.range"
	var step, unit, bounds *bson.RawValue
	for _, el := range mustElems(r) {
		v := el.Value()
		var dst **bson.RawValue
		switch el.Key() {
		case "step":
			dst = &step
		case "unit":
			if v.Type != bson.TypeString {
				return idlType(name, "unit", v, "string")
			}
			dst = &unit
		case "bounds":
			dst = &bounds
		default:
			return idlUnknown(name, el.Key())
		}
		if *dst != nil {
			return idlDuplicate(name, el.Key())
		}
		*dst = &v
	}
	if step == nil {
		return idlMissing(name, "step")
	}
	if bounds == nil {
		return idlMissing(name, "bounds")
	}
	if !bsonkit.IsNumber(step.Type) || bsonkit.Compare(*step, expr.Int32(0)) <= 0 {
		return mongoerr.New(mongoerr.Code(5733401), "The step parameter in a range statement must be a strictly positive numeric value")
	}
	s.step = *step
	if unit != nil {
		if _, ok := bsonkit.ExactInt64(*step); !ok {
			return mongoerr.New(mongoerr.Code(6586400), "The step parameter in a range statement must be a whole number when densifying a date range")
		}
		if _, err := timeUnitMillis(unit.StringValue()); err != nil {
			return err
		}
		s.unit = unit.StringValue()
	}
	switch bounds.Type {
	case bson.TypeArray:
		vals := bsonkit.Values(bounds.Value)
		if len(vals) != 2 {
			return mongoerr.New(mongoerr.Code(5733403), "A bounding array in a range statement must have exactly two elements")
		}
		if bsonkit.Compare(vals[0], vals[1]) > 0 {
			return mongoerr.New(mongoerr.Code(5733402), "A bounding array must be an ascending array of either two dates or two numbers")
		}
		switch {
		case bsonkit.IsNumber(vals[0].Type):
			if unit != nil {
				return mongoerr.New(mongoerr.Code(5733409), "Numeric bounds may not have unit parameter")
			}
			if !bsonkit.IsNumber(vals[1].Type) {
				return mongoerr.New(mongoerr.Code(5733406), "A bounding array must contain either both dates or both numeric types")
			}
			if vals[0].Type != vals[1].Type || vals[0].Type != step.Type {
				return mongoerr.New(mongoerr.Code(5876900), "Upper bound, lower bound, and step must all have the same type")
			}
		case vals[0].Type == bson.TypeDateTime:
			if vals[1].Type != bson.TypeDateTime {
				return mongoerr.New(mongoerr.Code(5733405), "A bounding array must contain either both dates or both numeric types")
			}
			if unit == nil {
				return mongoerr.New(mongoerr.Code(5733410), "A bounding array of dates must specify a unit")
			}
		default:
			return mongoerr.New(mongoerr.Code(5946800), "Explicit bounds must be numeric or dates")
		}
		s.bounds, s.lo, s.hi = densifyExplicit, vals[0], vals[1]
	case bson.TypeString:
		switch bounds.StringValue() {
		case "full":
			s.bounds = densifyFull
		case "partition":
			s.bounds = densifyPartition
		default:
			return mongoerr.New(mongoerr.Code(5946802), "Bounds string must either be 'full' or 'partition'")
		}
	default:
		return mongoerr.New(mongoerr.Code(5733404), "The bounds in a range statement must be the string 'full', 'partition', or an ascending array of two numbers or two dates")
	}
	return nil
}

// compile builds the sort and the expressions the run uses.
func (s *stageDensify) compile(pc *parseCtx) error {
	sortSpec := expr.NewDocBuilder()
	if s.bounds != densifyFull {
		for _, p := range s.parts {
			sortSpec.Append(p, expr.Int32(1))
		}
	}
	sortSpec.Append(s.field, expr.Int32(1))
	st, err := parseSort(pc, expr.Doc(sortSpec.Doc()))
	if err != nil {
		return err
	}
	s.sort = st
	s.scope = expr.NewScope()
	s.slotA = s.scope.Define("densifyA")
	s.slotB = s.scope.Define("densifyB")
	binary := func(op string) (expr.Expr, error) {
		return expr.Parse(expr.Doc(mustDoc(op, []string{"$$densifyA", "$$densifyB"})), s.scope)
	}
	if s.add, err = binary("$add"); err != nil {
		return err
	}
	if s.sub, err = binary("$subtract"); err != nil {
		return err
	}
	if s.mod, err = binary("$mod"); err != nil {
		return err
	}
	if s.fieldExpr, err = expr.Parse(expr.String("$"+s.field), s.scope); err != nil {
		return err
	}
	for _, p := range s.parts {
		e, err := expr.Parse(expr.String("$"+p), s.scope)
		if err != nil {
			return err
		}
		s.partExprs = append(s.partExprs, e)
	}
	return nil
}

// mustDoc builds {op: [args…]} with string arguments.
func mustDoc(op string, args []string) bson.Raw {
	vals := make([]bson.RawValue, len(args))
	for i, a := range args {
		vals[i] = expr.String(a)
	}
	b := expr.NewDocBuilder()
	b.Append(op, expr.Array(vals))
	return b.Doc()
}

func (s *stageDensify) name() string { return "$densify" }

func (s *stageDensify) explain() bson.D {
	return bson.D{{Key: "$densify", Value: s.spec}}
}

func (s *stageDensify) deps(d *depSet) bool {
	d.whole = true
	return false
}
