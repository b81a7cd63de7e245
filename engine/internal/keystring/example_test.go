package keystring_test

import (
	"bytes"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
)

func Example() {
	val := func(x any) bson.RawValue {
		t, b, _ := bson.MarshalValue(x)
		return bson.RawValue{Type: t, Value: b}
	}
	one := keystring.AppendValue(nil, val(int32(1)), false)
	oneDouble := keystring.AppendValue(nil, val(1.0), false)
	str := keystring.AppendValue(nil, val("a"), false)
	fmt.Println(bytes.Equal(one, oneDouble), bytes.Compare(one, str))

	// A compound key {a: 1, b: -1} followed by a record ID.
	key := keystring.AppendValue(nil, val("x"), false)
	key = keystring.AppendValue(key, val(int64(7)), true)
	key = append(key, 0, 0, 0, 42)
	vals, rest, err := keystring.Decode(key, []bool{false, true})
	fmt.Println(vals[0], vals[1], rest, err)
	// Output:
	// true -1
	// "x" {"$numberInt":"7"} [0 0 0 42] <nil>
}
