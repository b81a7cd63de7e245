package index

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// maxNesting bounds document depth; mongod accepts 100 levels of user
// nesting (plus a few for the envelope).
const maxNesting = 180

// Validate is validateDoc for writers that compute keys with
// KeysValidated.
func Validate(doc []byte) error { return validateDoc(doc) }

// validateDoc checks that doc is well-formed BSON at every depth (the
// driver's Validate checks one level), so that keys are only built from
// values keystring can encode and decode. It returns InvalidBSON.
func validateDoc(doc []byte) error {
	if err := validateLevel(doc, 0); err != nil {
		return mongoerr.Newf(mongoerr.InvalidBSON, "invalid document: %v", err)
	}
	return nil
}

type invalidDepth struct{}

func (invalidDepth) Error() string { return "document nesting is too deep" }

func validateLevel(doc []byte, depth int) error {
	if depth > maxNesting {
		return invalidDepth{}
	}
	d := bsoncore.Document(doc)
	if err := d.Validate(); err != nil {
		return err
	}
	// Validate checked the length, the elements and the terminator, so
	// the elements lie in d[4:length-1]; walking them allocates nothing.
	length, _, _ := bsoncore.ReadLength(d)
	for rem := d[4 : length-1]; len(rem) > 0; {
		e, rest, ok := bsoncore.ReadElement(rem)
		if !ok {
			return bsoncore.ErrInvalidLength
		}
		rem = rest
		v := e.Value()
		switch bson.Type(v.Type) {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			if err := validateLevel(v.Data, depth+1); err != nil {
				return err
			}
		case bson.TypeCodeWithScope:
			_, scope, ok := v.CodeWithScopeOK()
			if !ok {
				return bsoncore.ErrInvalidLength
			}
			if err := validateLevel(scope, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
