package match

import (
	"regexp"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// This file holds what the update package needs to test single array
// elements: $pull conditions and arrayFilters.
//
// $pull: {arr: {$gte: 6}} (IsOperatorDoc true) or {arr: 5}:
//
//	f, err := match.CompileValue("", cond)   // the filter {"": cond}
//	... f.MatchValue("", elem)               // test one element
//
// $pull: {arr: {x: 1}} (a document condition, IsOperatorDoc false): compile
// the document with Compile and test elements that are documents with Match.
//
// arrayFilters: [{"i.x": {$gt: 1}}]:
//
//	f, ident, err := match.CompileArrayFilter(filter)  // ident == "i"
//	... f.MatchValue(ident, elem)

// CompileValue compiles cond as the condition on one field: the filter
// {name: cond}. cond may be a plain value (equality), a regex, or an
// operator document. Errors are those of Compile.
func CompileValue(name string, cond bson.RawValue) (*Filter, error) {
	if cond.Type == bsonkit.TypeMissing {
		return nil, badValue("missing condition")
	}
	return Compile(bsonkit.Elem(name, cond))
}

// MatchValue reports whether the one-field document {name: v} matches f,
// with the usual path semantics (so an array v is traversed as a field
// holding an array would be). v must be valid BSON and not missing.
func (f *Filter) MatchValue(name string, v bson.RawValue) bool {
	if v.Type == bsonkit.TypeMissing {
		return f.Match(bson.Raw(emptyDoc))
	}
	return f.Match(bsonkit.Elem(name, v))
}

var emptyDoc = []byte{5, 0, 0, 0, 0}

var identRE = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// CompileArrayFilter compiles one entry of an update's arrayFilters and
// returns it with its identifier: the first path component shared by all
// its predicates ("i" for {"i.x": 1, "i.y": {$gt: 2}}). It returns
// FailedToParse when the filter names no field or two different
// identifiers, and BadValue when the identifier is not an alphanumeric
// string beginning with a lowercase letter, with mongod's messages.
func CompileArrayFilter(filter bson.Raw) (*Filter, string, error) {
	f, err := Compile(filter)
	if err != nil {
		return nil, "", err
	}
	ident := ""
	for _, p := range f.paths {
		first := bsonkit.SplitPath(p)[0]
		if ident == "" {
			ident = first
			continue
		}
		if first != ident {
			return nil, "", mongoerr.Newf(mongoerr.FailedToParse, "Expected a single top-level field name, found '%s' and '%s'", ident, first)
		}
	}
	if len(f.paths) == 0 {
		return nil, "", mongoerr.New(mongoerr.FailedToParse, "Cannot use an expression without a top-level field name in arrayFilters")
	}
	if !identRE.MatchString(ident) {
		return nil, "", badValue("The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'", ident)
	}
	return f, ident, nil
}
