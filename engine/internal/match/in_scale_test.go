package match

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestInLargeIsLinear is issue 13's $in of 1M elements on 200 documents
// (11-20 s): compiled three times, as a find does on its way to the
// plan, the hashed set keeps MongoDB's equality (an int64 member matches a double
// field, a document member matches only with the same field order).
func TestInLargeIsLinear(t *testing.T) {
	const n = 1_000_000
	in := make(bson.A, 0, n+3)
	for i := range n {
		in = append(in, int64(i*3))
	}
	in = append(in, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, bson.Regex{Pattern: "^z"}, nil)
	filter, _ := bson.Marshal(bson.D{{Key: "x", Value: bson.D{{Key: "$in", Value: in}}}})
	start := time.Now()
	var f *Filter
	for range 3 {
		var err error
		if f, err = Compile(filter); err != nil {
			t.Fatal(err)
		}
	}
	hits := 0
	for i := range 200 {
		doc, _ := bson.Marshal(bson.D{{Key: "x", Value: float64(i)}})
		if f.Match(doc) {
			hits++
		}
	}
	// Timing is a benchmark's business, not a test's: logged only.
	t.Logf("compile x3 and 200 matches: %v", time.Since(start))
	if hits != 67 {
		t.Errorf("matched %d of 200, want 67", hits)
	}
	for _, c := range []struct {
		doc  bson.D
		want bool
	}{
		{bson.D{{Key: "x", Value: int32(6)}}, true},
		{bson.D{{Key: "x", Value: int32(7)}}, false},
		{bson.D{{Key: "x", Value: bson.A{int32(7), 9.0}}}, true},
		{bson.D{{Key: "x", Value: bson.D{{Key: "a", Value: 1.0}, {Key: "b", Value: int64(2)}}}}, true},
		{bson.D{{Key: "x", Value: bson.D{{Key: "b", Value: 2}, {Key: "a", Value: 1}}}}, false},
		{bson.D{{Key: "x", Value: "zed"}}, true},
		{bson.D{{Key: "y", Value: 1}}, true}, // null member matches missing
	} {
		doc, _ := bson.Marshal(c.doc)
		if got := f.Match(doc); got != c.want {
			t.Errorf("%v: got %v", c.doc, got)
		}
	}
}
