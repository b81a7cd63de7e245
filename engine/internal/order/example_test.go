package order_test

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/order"
)

func ExampleOrder_Compare() {
	spec, _ := bson.Marshal(bson.D{{Key: "a", Value: -1}})
	o, err := order.Compile(spec)
	if err != nil {
		panic(err)
	}
	x, _ := bson.Marshal(bson.D{{Key: "a", Value: bson.A{1, 9}}})
	y, _ := bson.Marshal(bson.D{{Key: "a", Value: 5}})
	// Descending, an array sorts by its greatest element: 9 before 5.
	fmt.Println(o.Compare(x, y))
	// Output: -1
}
