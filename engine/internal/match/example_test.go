package match_test

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
)

func ExampleCompile() {
	filter, _ := bson.Marshal(bson.D{{Key: "tags", Value: "b"}, {Key: "n", Value: bson.D{{Key: "$gte", Value: 1.5}}}})
	f, err := match.Compile(filter)
	if err != nil {
		panic(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "tags", Value: bson.A{"a", "b"}}, {Key: "n", Value: int64(2)}})
	matched, pos := f.MatchPos(doc)
	fmt.Println(matched, pos)
	// Output: true 1
}

func ExampleCompileArrayFilter() {
	filter, _ := bson.Marshal(bson.D{{Key: "e.qty", Value: bson.D{{Key: "$gt", Value: 5}}}})
	f, ident, err := match.CompileArrayFilter(filter)
	if err != nil {
		panic(err)
	}
	elem, _ := bson.Marshal(bson.D{{Key: "qty", Value: 7}})
	fmt.Println(ident, f.MatchValue(ident, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem}))
	// Output: e true
}
