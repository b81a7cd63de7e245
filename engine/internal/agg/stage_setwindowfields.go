package agg

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
)

func init() { register("$setWindowFields", 0, parseSetWindowFields) }

// partitionTmpField is where a computed partitionBy value is kept while
// the documents are sorted, as mongod does.
const partitionTmpField = "__internal_setWindowFields_partition_key"

// winSort is $setWindowFields' sortBy.
type winSort struct {
	spec  bson.Raw
	paths []string
	dirs  []int
	first expr.Expr // "$<paths[0]>", the value rank and range windows use
}

// winOutput is one output field and its function.
type winOutput struct {
	field string
	fn    winFunc
	slot  int // the variable the value is handed to the projection in
}

// stageSetWindowFields is {$setWindowFields: {partitionBy, sortBy,
// output}}. Like mongod it runs as a $sort on the partition key and
// sortBy (after a $addFields of a computed key), then the window
// computation one partition at a time ($_internalSetWindowFields), then a
// $unset of the computed key. A partition past Limits.SetWindowFields is
// spilled to a temporary file with allowDiskUse (5643011 without); window
// function state past it fails with 5414201.
//
// Divergence: several outputs are added in the order of the output
// specification (mongod adds them in hash order); $addToSet over a
// left-unbounded window lists its values in ascending order (mongod's
// order is unspecified); output field names are checked at parse time
// (mongod checks them at the first document); non-integer range bounds are
// added to the sortBy value in double precision (mongod uses decimal128).
// The scripts in engine/testdata/agg/setwindowfields.txt pin the first
// three.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/setWindowFields/
type stageSetWindowFields struct {
	spec    bson.Raw
	pre     []stage   // [$addFields of the key] [$sort]
	post    stage     // $unset of the key, or nil
	partKey expr.Expr // nil: one partition
	sortBy  *winSort
	outputs []winOutput
	setter  *projection // $addFields of the outputs from their slots
	outSpec bson.Raw    // the output specification, for explain
	reads   expr.Deps
}

// idlUnknown is the IDL parser's error for an unknown field.
func idlUnknown(stage, field string) error {
	return mongoerr.Newf(mongoerr.Code(40415), "BSON field '%s.%s' is an unknown field.", stage, field)
}

// idlType is the IDL parser's error for a field of the wrong type.
func idlType(stage, field string, v bson.RawValue, want string) error {
	return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type '%s'", stage, field, typeNameOf(v), want)
}

// idlMissing is the IDL parser's error for a missing required field.
func idlMissing(stage, field string) error {
	return mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.%s' is missing but a required field", stage, field)
}

// idlDuplicate is the IDL parser's error for a repeated field.
func idlDuplicate(stage, field string) error {
	return mongoerr.Newf(mongoerr.Code(40413), "BSON field '%s.%s' is a duplicate field", stage, field)
}

// parseSetWindowFields parses the stage as SetWindowFieldsSpec and
// document_source_set_window_fields::createFromBson do.
func parseSetWindowFields(pc *parseCtx, spec bson.RawValue) (stage, error) {
	const name = "$setWindowFields"
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, failedToParse("the $setWindowFields stage specification must be an object, found %s", typeNameOf(spec))
	}
	doc := spec.Document()
	var partitionBy, sortBy, output *bson.RawValue
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	for _, el := range elems {
		v := el.Value()
		var dst **bson.RawValue
		switch el.Key() {
		case "partitionBy":
			dst = &partitionBy
		case "sortBy":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, idlType(name, "sortBy", v, "object")
			}
			dst = &sortBy
		case "output":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, idlType(name, "output", v, "object")
			}
			dst = &output
		default:
			return nil, idlUnknown(name, el.Key())
		}
		if *dst != nil {
			return nil, idlDuplicate(name, el.Key())
		}
		*dst = &v
	}
	if output == nil {
		return nil, idlMissing(name, "output")
	}
	s := &stageSetWindowFields{spec: doc}
	var partExpr expr.Expr
	if partitionBy != nil {
		if partExpr, err = expr.ParseDeps(*partitionBy, pc.scope, &s.reads); err != nil {
			return nil, err
		}
	}
	if sortBy != nil {
		if s.sortBy, err = parseWinSort(pc, sortBy.Document()); err != nil {
			return nil, err
		}
		s.reads.Paths = append(s.reads.Paths, s.sortBy.paths...)
	}
	s.outSpec = output.Document()
	if err := s.parseOutputs(pc, output.Document()); err != nil {
		return nil, err
	}
	if err := s.plan(pc, partitionBy, partExpr); err != nil {
		return nil, err
	}
	return s, nil
}

// parseWinSort parses sortBy as a SortPattern: order's codes for bad keys
// and directions.
func parseWinSort(pc *parseCtx, spec bson.Raw) (*winSort, error) {
	o, err := order.Compile(spec)
	if err != nil {
		return nil, err
	}
	if _, nat := o.Natural(); nat {
		return nil, mongoerr.New(mongoerr.Code(16410), "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	}
	ws := &winSort{spec: spec, paths: o.Paths()}
	for _, el := range mustElems(spec) {
		d, _ := bsonkit.Float64(el.Value())
		if d < 0 {
			ws.dirs = append(ws.dirs, -1)
		} else {
			ws.dirs = append(ws.dirs, 1)
		}
	}
	if len(ws.paths) > 0 {
		if ws.first, err = expr.Parse(expr.String("$"+ws.paths[0]), pc.scope); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// parseOutputs parses the output fields: conflicting paths fail with
// 6307900, then each function parses.
func (s *stageSetWindowFields) parseOutputs(pc *parseCtx, out bson.Raw) error {
	env := &winParseEnv{sortBy: s.sortBy, scope: pc.scope, pc: pc}
	elems, err := out.Elements()
	if err != nil {
		return mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	sc := pc.scope.Child()
	setSpec := expr.NewDocBuilder()
	for i, el := range elems {
		field := el.Key()
		for _, o := range s.outputs {
			if pathsConflict(o.field, field) {
				return mongoerr.New(mongoerr.Code(6307900), "$setWindowFields 'output' specification contains two conflicting paths")
			}
		}
		fn, err := parseWinFunc(env, field, el.Value())
		if err != nil {
			return err
		}
		v := fmt.Sprintf("swfOutput%d", i)
		slot := sc.Define(v)
		setSpec.Append(field, expr.String("$$"+v))
		s.outputs = append(s.outputs, winOutput{field: field, fn: fn, slot: slot})
	}
	s.reads.Whole = true
	if len(s.outputs) == 0 {
		return nil
	}
	spc := &parseCtx{opts: pc.opts, scope: sc, vars: pc.vars, depth: pc.depth, where: pc.where}
	if s.setter, err = parseProjection(spc, setSpec.Doc(), true); err != nil {
		return err
	}
	return nil
}

// constArray reports whether v is an array literal of constants, which
// mongod folds into a constant array partition key.
func constArray(v bson.RawValue) bool {
	if v.Type != bson.TypeArray {
		return false
	}
	for _, el := range bsonkit.Values(v.Value) {
		switch el.Type {
		case bson.TypeString:
			if strings.HasPrefix(el.StringValue(), "$") {
				return false
			}
		case bson.TypeEmbeddedDocument:
			return false
		case bson.TypeArray:
			if !constArray(el) {
				return false
			}
		}
	}
	return true
}

// pathsConflict reports whether two dotted paths are equal or one is a
// prefix of the other.
func pathsConflict(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return strings.HasPrefix(b, a+".")
}

// plan builds the stages that run before and after the window
// computation: the key's $addFields, the $sort and the $unset.
func (s *stageSetWindowFields) plan(pc *parseCtx, raw *bson.RawValue, partExpr expr.Expr) error {
	keyPath := ""
	if partExpr != nil {
		if constArray(*raw) {
			return mongoerr.New(mongoerr.TypeMismatch, "An expression used to winPartition cannot evaluate to value of type array")
		}
		if c, ok := expr.IsConst(partExpr); ok {
			if c.Type == bson.TypeArray {
				return mongoerr.New(mongoerr.TypeMismatch, "An expression used to winPartition cannot evaluate to value of type array")
			}
		} else if p, ok := expr.FieldPath(partExpr); ok {
			keyPath = p
			s.partKey = partExpr
		} else {
			keyPath = partitionTmpField
			b := expr.NewDocBuilder()
			b.Append(partitionTmpField, *raw)
			st, err := parseProjectStage(pc, "$addFields", expr.Doc(b.Doc()))
			if err != nil {
				return err
			}
			s.pre = append(s.pre, st)
			if s.partKey, err = expr.Parse(expr.String("$"+partitionTmpField), pc.scope); err != nil {
				return err
			}
			if s.post, err = parseUnset(pc, expr.String(partitionTmpField)); err != nil {
				return err
			}
		}
	}
	sortSpec := expr.NewDocBuilder()
	n := 0
	if keyPath != "" {
		sortSpec.Append(keyPath, expr.Int32(1))
		n++
	}
	if s.sortBy != nil {
		for _, el := range mustElems(s.sortBy.spec) {
			if el.Key() != keyPath {
				sortSpec.Append(el.Key(), el.Value())
				n++
			}
		}
	}
	if n > 0 {
		st, err := parseSort(pc, expr.Doc(sortSpec.Doc()))
		if err != nil {
			return err
		}
		s.pre = append(s.pre, st)
	}
	return nil
}

func (s *stageSetWindowFields) name() string { return "$setWindowFields" }

func (s *stageSetWindowFields) explain() bson.D {
	return bson.D{{Key: "$setWindowFields", Value: s.spec}}
}

func (s *stageSetWindowFields) deps(d *depSet) bool {
	d.addExpr(&s.reads)
	return false
}
