package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// compareValues orders two BSON values as MongoDB does with the simple
// collation; $min, $max, $addToSet, $pull, $pullAll and $push's $sort all
// use it.
func compareValues(a, b bson.RawValue) int { return bsonkit.Compare(a, b) }
