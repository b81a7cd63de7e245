package extref

import "go.mongodb.org/mongo-driver/v2/bson"

// explainUpdate is the explain form of updateMany(filter, update).
func explainUpdate(coll string, filter, update bson.D) bson.D {
	return bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: filter}, {Key: "u", Value: update}, {Key: "multi", Value: true}}}}}
}
