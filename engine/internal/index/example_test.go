package index_test

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
)

func Example() {
	spec, err := index.ParseSpec(must(bson.Marshal(bson.D{
		{Key: "key", Value: bson.D{{Key: "tags", Value: 1}}},
		{Key: "name", Value: "tags_1"},
		{Key: "unique", Value: true},
	})))
	if err != nil {
		panic(err)
	}
	ix, err := index.Compile(spec)
	if err != nil {
		panic(err)
	}
	doc := must(bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "tags", Value: bson.A{"b", "a", "b"}}}))
	keys, mk, err := ix.Keys(doc)
	fmt.Println(len(keys), mk.Paths, err)
	fmt.Println(ix.DuplicateKeyError("db.coll", doc, keys[0]).Msg)
	// Output:
	// 2 [[0]] <nil>
	// E11000 duplicate key error collection: db.coll index: tags_1 dup key: { tags: "a" }
}

func must(b []byte, err error) bson.Raw {
	if err != nil {
		panic(err)
	}
	return b
}
