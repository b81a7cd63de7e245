package projection_test

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/projection"
)

func ExampleProjection_Apply() {
	spec, _ := bson.Marshal(bson.D{{Key: "s", Value: bson.D{{Key: "$slice", Value: -1}}}, {Key: "_id", Value: 0}, {Key: "t", Value: 1}})
	p, err := projection.Compile(spec)
	if err != nil {
		panic(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: bson.A{1, 2, 3}}, {Key: "t", Value: "x"}, {Key: "u", Value: true}})
	out, err := p.Apply(doc, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output: {"s": [{"$numberInt":"3"}],"t": "x"}
}
