package update

import (
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestApplyConcurrent applies one compiled Update from many goroutines;
// run with -race.
func TestApplyConcurrent(t *testing.T) {
	spec := mustJSONDoc(`{"$inc": {"n": 1}, "$push": {"a": {"$each": [3, 1], "$sort": 1, "$slice": -3}}, "$set": {"b.$[x]": 0}}`)
	u, err := Compile(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: spec}, []bson.Raw{mustJSONDoc(`{"x": {"$gt": 1}}`)})
	if err != nil {
		t.Fatal(err)
	}
	doc := bson.Raw(mustJSONDoc(`{"_id": 1, "n": 1, "a": [2], "b": [1, 2, 3]}`))
	want, _, err := u.Apply(doc, -1, scriptNow)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				got, changed, err := u.Apply(doc, -1, scriptNow)
				if err != nil || !changed || string(got) != string(want) {
					t.Errorf("concurrent apply: %v %v %s", err, changed, canonical(got))
					return
				}
			}
		}()
	}
	wg.Wait()
}
