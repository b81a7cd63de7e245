package match

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/schema"
)

// schemaNode is {$jsonSchema: <schema>}: the document (or, under
// $elemMatch, the array element) satisfies the compiled schema.
type schemaNode struct {
	s   *schema.Schema
	arg bson.RawValue
}

// parseJSONSchema compiles the operand of $jsonSchema with package
// schema. It returns TypeMismatch for an operand that is not a document
// and schema.Compile's errors.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/jsonSchema/
func parseJSONSchema(v bson.RawValue) (node, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema must be an object")
	}
	s, err := schema.Compile(v.Document())
	if err != nil {
		return nil, err
	}
	return &schemaNode{s: s, arg: v}, nil
}

func (n *schemaNode) match(doc []byte, _ *evalState) (bool, int) {
	return n.s.Match(doc), -1
}

func (n *schemaNode) matchValue(v bson.RawValue) bool {
	return v.Type == bson.TypeEmbeddedDocument && n.s.Match(v.Value)
}
