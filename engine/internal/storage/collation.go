package storage

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// idIndexSpecFor returns the _id index spec of a new collection with the
// given create options: IDIndexSpec, with the collection's default
// collation when it has one (mongod's _id index inherits it).
func idIndexSpecFor(options bson.Raw) bson.Raw {
	v, err := options.LookupErr("collation")
	if err != nil || v.Type != bson.TypeEmbeddedDocument {
		return IDIndexSpec
	}
	return mustMarshal(bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}, {Key: "collation", Value: v.Document()}})
}
