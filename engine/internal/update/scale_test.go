package update

import (
	"context"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// scaleUpdate builds the update {op: {…}} whose operand lists n items:
// "each" gives {a: {$each: [0 … n-1]}} (with every value twice, as int32
// and as double, which MongoDB treats as equal), "fields" gives {f0: 0 …},
// "pullAll" gives {a: [0 … n-1]}.
func scaleUpdate(op, shape string, n int) bson.RawValue {
	var operand bson.D
	switch shape {
	case "each":
		arr := make(bson.A, 0, 2*n)
		for i := range n {
			arr = append(arr, int32(i), float64(i))
		}
		operand = bson.D{{Key: "a", Value: bson.D{{Key: "$each", Value: arr}}}}
	case "fields":
		operand = make(bson.D, 0, n)
		for i := range n {
			operand = append(operand, bson.E{Key: "f" + strconv.Itoa(i), Value: int32(i)})
		}
	case "pullAll":
		arr := make(bson.A, 0, n)
		for i := range n {
			arr = append(arr, int64(i))
		}
		operand = bson.D{{Key: "a", Value: arr}}
	}
	b, _ := bson.Marshal(bson.D{{Key: op, Value: operand}})
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: b}
}

// scaleDoc is {_id: 1, a: [0 … n-1 as doubles], f0 … f(n-1)} (fields only
// when withFields).
func scaleDoc(n int, withFields bool) bson.Raw {
	arr := make(bson.A, 0, n)
	for i := range n {
		arr = append(arr, float64(i))
	}
	d := bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: arr}}
	if withFields {
		for i := range n {
			d = append(d, bson.E{Key: "f" + strconv.Itoa(i), Value: int32(i)})
		}
	}
	b, _ := bson.Marshal(d)
	return b
}

// runScale compiles and applies one update of n items and returns the
// time taken and the result.
func runScale(t testing.TB, op, shape string, n int, doc bson.Raw) (time.Duration, bson.Raw) {
	start := time.Now()
	u, err := Compile(scaleUpdate(op, shape, n), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := u.Apply(doc, -1, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return time.Since(start), out
}

// TestManyValuesScaleLinearly is issue 13's stall: $addToSet with $each of
// 20k values took 33 s, $set of 200k fields never finished. Each operator
// here handles 40k items (20k took 25-43 s for $addToSet and $pullAll, 2.6
// s for $set before) in well under the time a quadratic path needs, and
// gives the right answer; BenchmarkManyValues shows 200k.
func TestManyValuesScaleLinearly(t *testing.T) {
	const n = 40_000
	// Timings are logged, not asserted (BenchmarkManyValues measures
	// them); a quadratic path shows there and in this test's run time.
	empty, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{}}})

	d, out := runScale(t, "$addToSet", "each", n, empty)
	t.Logf("$addToSet $each %d: %v", n, d)
	if vals, _ := out.Lookup("a").Array().Values(); len(vals) != n {
		t.Errorf("$addToSet kept %d values, want %d", len(vals), n)
	}
	// Adding the same values again (int32 and double equal to the stored
	// doubles) changes nothing.
	if d, again := runScale(t, "$addToSet", "each", n, out); !bytesEqual(again, out) {
		t.Errorf("$addToSet of present values: %v, changed=%v", d, !bytesEqual(again, out))
	}
	full := scaleDoc(n, false)
	d, out = runScale(t, "$pullAll", "pullAll", n, full)
	if vals, _ := out.Lookup("a").Array().Values(); len(vals) != 0 {
		t.Errorf("$pullAll %d: %v, %d left", n, d, len(vals))
	}
	d, out = runScale(t, "$set", "fields", n, empty)
	if out.Lookup("f"+strconv.Itoa(n-1)).Int32() != int32(n-1) {
		t.Errorf("$set of %d fields: %v", n, d)
	}
	d, out = runScale(t, "$unset", "fields", n, out)
	if elems, _ := out.Elements(); len(elems) != 2 {
		t.Errorf("$unset of %d fields: %v, %d fields left", n, d, len(elems))
	}
}

func bytesEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// BenchmarkManyValues reports each operator at 20k, 40k and 200k items;
// near-linear paths show a per-item cost that stays flat.
func BenchmarkManyValues(b *testing.B) {
	empty, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{}}})
	for _, n := range []int{20_000, 40_000, 200_000} {
		for _, c := range []struct {
			name, op, shape string
			doc             bson.Raw
		}{
			{"addToSet", "$addToSet", "each", empty},
			{"pullAll", "$pullAll", "pullAll", scaleDoc(n, false)},
			{"set", "$set", "fields", empty},
			{"unset", "$unset", "fields", scaleDoc(n, true)},
		} {
			b.Run(c.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					runScale(b, c.op, c.shape, n, c.doc)
				}
			})
		}
	}
}

// TestApplyContextInterrupts: a long update stops when its context is
// done, with MaxTimeMSExpired past a deadline and Interrupted when
// cancelled (a client gone), instead of running to the end under the
// write lock.
func TestApplyContextInterrupts(t *testing.T) {
	const n = 200_000
	empty, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{}}})
	for _, c := range []struct {
		op, shape string
		doc       bson.Raw
	}{
		{"$set", "fields", empty},
		{"$addToSet", "each", empty},
		{"$pullAll", "pullAll", scaleDoc(n, false)},
	} {
		u, err := Compile(scaleUpdate(c.op, c.shape, n), nil)
		if err != nil {
			t.Fatal(err)
		}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err = u.ApplyContext(cancelled, c.doc, -1, time.Time{})
		if me := mongoerr.As(err); me == nil || me.Code != mongoerr.Interrupted {
			t.Errorf("%s cancelled: %v", c.op, err)
		}
		expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		_, _, err = u.ApplyContext(expired, c.doc, -1, time.Time{})
		cancel2()
		if me := mongoerr.As(err); me == nil || me.Code != mongoerr.MaxTimeMSExpired {
			t.Errorf("%s past deadline: %v", c.op, err)
		}
	}
}
