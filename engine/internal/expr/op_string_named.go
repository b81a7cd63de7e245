package expr

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// The string operators that take named arguments: $trim, $ltrim, $rtrim,
// $replaceOne and $replaceAll.
func init() {
	register("$trim", parseTrim)
	register("$ltrim", parseTrim)
	register("$rtrim", parseTrim)
	register("$replaceOne", parseReplace)
	register("$replaceAll", parseReplace)
}

// namedArgs parses an operator's object of named arguments. It returns
// the parsed expressions by name, or the error unknown(name) for a field
// not in allowed.
func namedArgs(p *Parser, doc bson.Raw, allowed []string, unknown func(string) error) (map[string]Expr, error) {
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	out := make(map[string]Expr, len(elems))
	for _, el := range elems {
		k := el.Key()
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return nil, unknown(k)
		}
		if out[k], err = p.Parse(el.Value()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// trimExpr is $trim, $ltrim or $rtrim.
type trimExpr struct {
	name        string
	input       Expr
	chars       Expr // nil: the default whitespace
	left, right bool
}

// parseTrim parses {input, chars} for $trim, $ltrim and $rtrim (50694-50696).
func parseTrim(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.Code(50696), "%s only supports an object as an argument, found %s", name, bsonkit.TypeName(arg.Type))
	}
	args, err := namedArgs(p, arg.Document(), []string{"input", "chars"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(50694), "%s found an unknown argument: %s", name, k)
	})
	if err != nil {
		return nil, err
	}
	if args["input"] == nil {
		return nil, mongoerr.Newf(mongoerr.Code(50695), "%s requires an 'input' field", name)
	}
	return foldNamed(&trimExpr{name: name, input: args["input"], chars: args["chars"],
		left: name != "$rtrim", right: name != "$ltrim"}, args)
}

// Eval trims the code points of chars (or whitespace) from the input.
func (e *trimExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(50699), "%s requires its input to be a string, got %s (of type %s) instead.", e.name, valueString(in), bsonkit.TypeName(in.Type))
	}
	set := trimSpace
	if e.chars != nil {
		cv, err := e.chars.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(cv) {
			return Null(), nil
		}
		if cv.Type != bson.TypeString {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(50700), "%s requires 'chars' to be a string, got %s (of type %s) instead.", e.name, valueString(cv), bsonkit.TypeName(cv.Type))
		}
		set = []rune(cv.StringValue())
	}
	has := func(r rune) bool {
		for _, x := range set {
			if x == r {
				return true
			}
		}
		return false
	}
	s := in.StringValue()
	if e.left {
		s = strings.TrimLeftFunc(s, has)
	}
	if e.right {
		s = strings.TrimRightFunc(s, has)
	}
	return String(s), nil
}

// trimSpace is mongod's default set for $trim: NUL, the ASCII spaces and
// the Unicode space separators.
var trimSpace = []rune{0, ' ', '\t', '\n', '\v', '\f', '\r', 0xA0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
	0x2028, 0x2029, 0x202F, 0x205F, 0x3000}

// replaceExpr is $replaceOne or $replaceAll with a string to find.
type replaceExpr struct {
	name                     string
	all                      bool
	input, find, replacement Expr
}

// parseReplace parses {input, find, replacement} (51747-51751).
func parseReplace(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.Code(51751), "%s requires an object as an argument, found: %s", name, bsonkit.TypeName(arg.Type))
	}
	args, err := namedArgs(p, arg.Document(), []string{"input", "find", "replacement"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(51750), "%s found an unknown argument: %s", name, k)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case args["input"] == nil:
		return nil, mongoerr.Newf(mongoerr.Code(51749), "%s requires 'input' to be specified", name)
	case args["find"] == nil:
		return nil, mongoerr.Newf(mongoerr.Code(51748), "%s requires 'find' to be specified", name)
	case args["replacement"] == nil:
		return nil, mongoerr.Newf(mongoerr.Code(51747), "%s requires 'replacement' to be specified", name)
	}
	return foldNamed(&replaceExpr{name: name, all: name == "$replaceAll", input: args["input"], find: args["find"], replacement: args["replacement"]}, args)
}

// Eval replaces the first or every occurrence of find; any nullish operand
// gives null, after every operand's type is checked (51744-51746).
func (e *replaceExpr) Eval(c *Ctx) (bson.RawValue, error) {
	vals, err := EvalAll(c, []Expr{e.input, e.find, e.replacement})
	if err != nil {
		return bson.RawValue{}, err
	}
	for i, what := range []string{"input", "find", "replacement"} {
		if v := vals[i]; v.Type != bson.TypeString && !IsNullish(v) {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(51746-i), "%s requires that '%s' be a string, found: %s", e.name, what, valueString(v))
		}
	}
	for _, v := range vals {
		if IsNullish(v) {
			return Null(), nil
		}
	}
	in, find, repl := vals[0].StringValue(), vals[1].StringValue(), vals[2].StringValue()
	if !e.all {
		return String(strings.Replace(in, find, repl, 1)), nil
	}
	var out strings.Builder
	if find == "" {
		// mongod inserts the replacement around every byte.
		for i := 0; i < len(in); i++ {
			out.WriteString(repl)
			out.WriteByte(in[i])
			if out.Len() > MaxBSONSize {
				return bson.RawValue{}, errTooLarge()
			}
		}
		out.WriteString(repl)
		return String(out.String()), nil
	}
	n := strings.Count(in, find)
	if int64(len(in))+int64(n)*(int64(len(repl))-int64(len(find))) > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	return String(strings.ReplaceAll(in, find, repl)), nil
}
