package update

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// arrayFilter is one entry of the arrayFilters option: a query whose
// top-level paths all start with the same identifier, matched against an
// array member as if the member were the value of that identifier.
type arrayFilter struct {
	id    string
	query *collQuery
}

// queryMatcher matches a document against a compiled query filter.
type queryMatcher interface {
	matchDoc(doc bson.Raw) bool
	// matchPos also returns the array index the positional operator uses,
	// -1 for none.
	matchPos(doc bson.Raw) (bool, int)
}

// parseArrayFilters compiles the arrayFilters option. Errors follow
// mongod: FailedToParse for a filter without a field name, with two
// identifiers, or with an identifier already used; BadValue for an
// identifier that is not lowercase-initial alphanumeric; the match
// compiler's errors prefixed with "Error parsing array filter :: caused by
// :: ".
func parseArrayFilters(raw []bson.Raw) (map[string]*arrayFilter, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]*arrayFilter, len(raw))
	for _, f := range raw {
		if err := validDeep(f, 0); err != nil {
			return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid array filter: %v", err)
		}
		q, err := compileCollQuery(f)
		if err != nil {
			me := mongoerr.As(err)
			return nil, mongoerr.Newf(me.Code, "Error parsing array filter :: caused by :: %s", me.Msg)
		}
		id, err := placeholder(f)
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Cannot use an expression without a top-level field name in arrayFilters")
		}
		if !validIdentifier(id) {
			return nil, mongoerr.Newf(mongoerr.BadValue,
				"Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'", id)
		}
		if _, dup := out[id]; dup {
			return nil, mongoerr.Newf(mongoerr.FailedToParse,
				"Found multiple array filters with the same top-level field name %s", id)
		}
		out[id] = &arrayFilter{id: id, query: q}
	}
	return out, nil
}

// placeholder returns the identifier a filter's paths start with, looking
// through $and, $or and $nor; "" when the filter names no path.
func placeholder(f []byte) (string, error) {
	id := ""
	var walk func(doc []byte) error
	walk = func(doc []byte) error {
		elems, _ := bsoncore.Document(doc).Elements()
		for _, el := range elems {
			k := el.Key()
			if strings.HasPrefix(k, "$") {
				if k == "$and" || k == "$or" || k == "$nor" {
					vals, _ := bsoncore.Document(el.Value().Data).Values()
					for _, v := range vals {
						if bson.Type(v.Type) == bson.TypeEmbeddedDocument {
							if err := walk(v.Data); err != nil {
								return err
							}
						}
					}
				}
				continue
			}
			first, _, _ := strings.Cut(k, ".")
			switch {
			case id == "":
				id = first
			case id != first:
				return mongoerr.Newf(mongoerr.FailedToParse,
					"Error parsing array filter :: caused by :: Expected a single top-level field name, found '%s' and '%s'",
					id, first)
			}
		}
		return nil
	}
	return id, walk(f)
}

func validIdentifier(id string) bool {
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// matchValue reports whether an array member matches the filter, strings
// compared under coll (nil: simple).
func (f *arrayFilter) matchValue(v bson.RawValue, coll *collation.Collator) (bool, error) {
	return f.query.under(coll).matchDoc(wrapValue(f.id, v)), nil
}

// wrapValue builds the document {name: v}.
func wrapValue(name string, v bson.RawValue) bson.Raw {
	idx, b := bsoncore.AppendDocumentStart(nil)
	b = bsoncore.AppendValueElement(b, name, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	b, _ = bsoncore.AppendDocumentEnd(b, idx)
	return b
}

// newPull parses the operand of $pull: a document of query conditions on
// the members' fields (matched only against document members), an operator
// condition or regex (matched against each member), or a plain value
// (removed by BSON equality).
func newPull(v bson.RawValue) (*opPull, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		doc := bson.Raw(v.Value)
		elems, _ := doc.Elements()
		if len(elems) > 0 && isPathOperator(elems[0].Key()) {
			return wrappedPull(v)
		}
		q, err := compileCollQuery(doc)
		if err != nil {
			return nil, err
		}
		return &opPull{match: func(c *applyCtx, x bson.RawValue) (bool, error) {
			d, ok := x.DocumentOK()
			return ok && q.under(c.coll).matchDoc(d), nil
		}}, nil
	case bson.TypeRegex:
		return wrappedPull(v)
	}
	return &opPull{match: func(c *applyCtx, x bson.RawValue) (bool, error) { return bsonkit.CompareWith(x, v, c.coll) == 0, nil }}, nil
}

// wrappedPull matches each member m as the document {"": m} against the
// query {"": cond}.
func wrappedPull(cond bson.RawValue) (*opPull, error) {
	q, err := compileCollQuery(wrapValue("", cond))
	if err != nil {
		return nil, err
	}
	return &opPull{match: func(c *applyCtx, x bson.RawValue) (bool, error) {
		return q.under(c.coll).matchDoc(wrapValue("", x)), nil
	}}, nil
}

// isPathOperator reports whether name is a query operator that applies to
// a path ($gt, $in, $elemMatch, ...), as opposed to a top-level one ($and)
// or a field name.
func isPathOperator(name string) bool {
	switch name {
	case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$exists",
		"$type", "$mod", "$regex", "$options", "$elemMatch", "$size", "$not",
		"$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear",
		"$near", "$nearSphere", "$geoWithin", "$geoIntersects", "$within",
		"$maxDistance", "$minDistance", "$_internalSchemaType":
		return true
	}
	return false
}
