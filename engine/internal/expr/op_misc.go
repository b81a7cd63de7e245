package expr

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Miscellaneous operators: $rand, $bsonSize, $binarySize, and $function,
// which parses like mongod's but cannot run (no JavaScript engine).
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#miscellaneous-operators
func init() {
	register("$rand", parseRand)
	register("$bsonSize", opValues(1, bsonSize))
	register("$binarySize", opValues(1, binarySize))
	register("$function", parseFunction)
}

// randExpr is $rand: a double in [0, 1) from the context's source.
type randExpr struct{}

func (randExpr) Eval(c *Ctx) (bson.RawValue, error) { return Double(c.Rand()), nil }

func parseRand(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, exprErr(10065, "invalid parameter: expected an object ($rand)")
	}
	if bsonkit.Len(arg.Value) != 0 {
		return nil, exprErr(3040501, "$rand does not currently accept arguments")
	}
	return randExpr{}, nil
}

// bsonSize is the size in bytes of a document as BSON.
func bsonSize(v []bson.RawValue) (bson.RawValue, error) {
	if IsNullish(v[0]) {
		return Null(), nil
	}
	if v[0].Type != bson.TypeEmbeddedDocument {
		return bson.RawValue{}, exprErr(31393, "$bsonSize requires a document input, found: %s", typeName(v[0]))
	}
	return Int32(int32(len(v[0].Value))), nil
}

// binarySize is the length in bytes of a string or binData.
func binarySize(v []bson.RawValue) (bson.RawValue, error) {
	x := v[0]
	switch {
	case IsNullish(x):
		return Null(), nil
	case x.Type == bson.TypeString:
		return Int32(int32(len(x.StringValue()))), nil
	case x.Type == bson.TypeBinary:
		return Int32(int32(binary.LittleEndian.Uint32(x.Value))), nil
	}
	return bson.RawValue{}, exprErr(51276, "$binarySize requires a string or BinData argument, found: %s", typeName(x))
}

// functionExpr is a parsed $function; evaluating it fails as mongod
// without a JavaScript engine does.
type functionExpr struct{ args Expr }

func (e *functionExpr) Eval(c *Ctx) (bson.RawValue, error) {
	return bson.RawValue{}, exprErr(31264, "Cannot run server-side javascript without the javascript engine enabled")
}

// parseFunction checks a $function's fields as mongod does.
//
// Divergence: the engine has no JavaScript engine, so a $function that
// parses fails when evaluated with 31264, as mongod started with
// --noscripting does.
func parseFunction(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, exprErr(31260, "$function requires an object as an argument, found: %s", typeName(arg))
	}
	body, ok := bsonkit.Field(arg.Value, "body")
	if !ok {
		return nil, exprErr(31261, "The body function must be specified.")
	}
	be, err := p.Parse(body)
	if err != nil {
		return nil, err
	}
	bv, ok := IsConst(be)
	if !ok {
		return nil, exprErr(31432, "The body function must be a constant expression")
	}
	if bv.Type != bson.TypeString && bv.Type != bson.TypeJavaScript {
		return nil, exprErr(31262, "The body function must evaluate to type string or code")
	}
	argsV, ok := bsonkit.Field(arg.Value, "args")
	if !ok {
		return nil, exprErr(31263, "The args field must be specified.")
	}
	ae, err := p.Parse(argsV)
	if err != nil {
		return nil, err
	}
	lang, ok := bsonkit.Field(arg.Value, "lang")
	if !ok {
		return nil, exprErr(31418, "The lang field must be specified.")
	}
	if lang.Type != bson.TypeString || lang.StringValue() != "js" {
		return nil, exprErr(31419, "Currently the only supported language specifier is 'js'.")
	}
	return &functionExpr{args: ae}, nil
}
