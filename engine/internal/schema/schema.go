package schema

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Spec returns the schema document Compile was given.
func (s *Schema) Spec() bson.Raw { return s.spec }

// Match reports whether doc, a valid BSON document, satisfies the schema.
func (s *Schema) Match(doc bson.Raw) bool {
	return s.root.match(value{bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, true})
}

// Explain returns the errInfo details of a document Match rejected, as
// mongod 5.0+ reports them:
//
//	{operatorName: "$jsonSchema", title, description,
//	 schemaRulesNotSatisfied: [{operatorName: "properties", ...}, ...]}
func (s *Schema) Explain(doc bson.Raw) bson.D {
	v := value{bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, true}
	if s.never {
		return neverError(s.spec)
	}
	d := bson.D{{Key: "operatorName", Value: "$jsonSchema"}}
	d = append(d, s.root.annotations...)
	return append(d, bson.E{Key: "schemaRulesNotSatisfied", Value: s.root.explainList(v)})
}

// neverError is the error of a top-level schema whose type excludes
// objects.
func neverError(spec bson.Raw) bson.D {
	return bson.D{
		{Key: "operatorName", Value: "$jsonSchema"},
		{Key: "specifiedAs", Value: bson.D{{Key: "$jsonSchema", Value: spec}}},
		{Key: "reason", Value: "expression always evaluates to false"},
	}
}

func (n *node) match(v value) bool {
	if n.never {
		return false
	}
	for _, r := range n.rules {
		if !r.match(v) {
			return false
		}
	}
	return true
}

// explainList returns the errors of the rules of n that v fails, in rule
// order: the array a subschema's error is.
func (n *node) explainList(v value) bson.A {
	out := bson.A{}
	if n.never {
		return append(out, neverError(n.spec))
	}
	for _, r := range n.rules {
		if !r.match(v) {
			out = append(out, r.explain(v)...)
		}
	}
	return out
}

// explainDetails is explainList, except that a top-level subschema whose
// type excludes objects reports its one error as an object, as mongod's
// always-false node does.
func (n *node) explainDetails(v value) any {
	if n.never {
		return neverError(n.spec)
	}
	return n.explainList(v)
}
