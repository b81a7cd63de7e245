package engine

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// keyerFor compiles an index spec into its key generator.
func keyerFor(spec bson.Raw) (storage.Keyer, error) {
	name, _ := spec.Lookup("name").StringValueOK()
	if name != "_id_" {
		return nil, fmt.Errorf("index %q: only the _id index is supported", name)
	}
	return idKeyer{}, nil
}

// idKeyer generates the _id index key: the encoded _id value.
type idKeyer struct{}

var nullValue = bson.RawValue{Type: bson.TypeNull}

func (idKeyer) Keys(doc bson.Raw) ([][]byte, error) {
	v, err := doc.LookupErr("_id")
	if err != nil {
		v = nullValue
	}
	return [][]byte{keystring.AppendValue(nil, v, false)}, nil
}
