package extref

import "go.mongodb.org/mongo-driver/v2/bson"

// explainUpdate is the explain form of updateMany(filter, update).
// Divergence workaround: the engine's explain of update skips the first
// field of each statement (reported), so "u" comes before "q"; MongoDB
// reads the fields in any order.
func explainUpdate(coll string, filter, update bson.D) bson.D {
	return bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "u", Value: update}, {Key: "q", Value: filter}, {Key: "multi", Value: true}}}}}
}
