package expr

import (
	"crypto/md5"
	"encoding/binary"
	"hash"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Miscellaneous operators: $rand, $bsonSize, $binarySize,
// $toHashedIndexKey, and $function, which parses like mongod's but cannot
// run (no JavaScript engine).
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#miscellaneous-operators
func init() {
	register("$rand", parseRand)
	register("$bsonSize", opValues(1, bsonSize))
	register("$binarySize", opValues(1, binarySize))
	register("$function", parseFunction)
	register("$toHashedIndexKey", opValues(1, func(v []bson.RawValue) (bson.RawValue, error) {
		x := v[0]
		if x.Type == 0 {
			x = Null()
		}
		return Int64(HashValue(x)), nil
	}))
}

// HashValue is the key a hashed index stores for v: mongod's
// BSONElementHasher::hash64 with seed 0, the first 8 bytes (little-endian)
// of an MD5 over the value's canonical type and contents, numbers taken as
// 64-bit integers. Values equal in BSON order hash alike.
func HashValue(v bson.RawValue) int64 {
	h := md5.New()
	h.Write([]byte{0, 0, 0, 0}) // the seed
	hashInto(h, v, "", false, 0)
	return int64(binary.LittleEndian.Uint64(h.Sum(nil)))
}

// hashInto adds one element to the hash; depth bounds the recursion.
func hashInto(h hash.Hash, v bson.RawValue, name string, withName bool, depth int) {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:4], uint32(int32(bsonkit.CanonicalType(v.Type))))
	h.Write(b[:4])
	if withName {
		h.Write([]byte(name))
		h.Write([]byte{0})
	}
	switch {
	case isNum(v):
		n, _ := bsonkit.TruncInt64(v) // NaN hashes as 0, ±Inf saturate
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	case v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray || v.Type == bson.TypeCodeWithScope:
		doc := v.Value
		if v.Type == bson.TypeCodeWithScope {
			code, scope := v.CodeWithScope()
			h.Write(v.Value[8 : 8+len(code)+1])
			doc = scope
		}
		if depth < MaxDepth*2 {
			bsonkit.ForEach(doc, func(k string, ev bson.RawValue) bool {
				hashInto(h, ev, k, true, depth+1)
				return true
			})
		}
		// The terminating EOO element: canonical type 0 and an empty name.
		h.Write([]byte{0, 0, 0, 0, 0})
	default:
		h.Write(v.Value)
	}
}

// randExpr is $rand: a double in [0, 1) from the context's source.
type randExpr struct{}

func (randExpr) Eval(c *Ctx) (bson.RawValue, error) { return Double(c.Rand()), nil }

// parseRand parses {$rand: {}}.
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
