package timeseries

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func opts(t *testing.T, meta bool) *Options {
	t.Helper()
	d := bson.D{{Key: "timeField", Value: "t"}}
	if meta {
		d = append(d, bson.E{Key: "metaField", Value: "m"})
	}
	raw, _ := bson.Marshal(d)
	o, err := Parse("create", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func rv(v any) bson.RawValue {
	raw, _ := bson.Marshal(bson.D{{Key: "x", Value: v}})
	return bson.Raw(raw).Lookup("x")
}

// TestColumnRoundTrip checks that every encoding decodes to the values
// and positions it was given, bit for bit.
func TestColumnRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(i int) any{
		"dates":      func(i int) any { return bson.DateTime(1700000000000 + int64(i)*1000) },
		"jitter":     func(i int) any { return bson.DateTime(1700000000000 + int64(i)*1000 + r.Int64N(7)) },
		"int32":      func(i int) any { return int32(r.IntN(100) - 50) },
		"int64":      func(i int) any { return r.Int64() },
		"decimals":   func(i int) any { return float64(r.IntN(10000)) / 10 },
		"doubles":    func(i int) any { return r.Float64() },
		"specials":   func(i int) any { return []float64{math.NaN(), math.Inf(1), math.Copysign(0, -1), 0, 1e300}[i%5] },
		"strings":    func(i int) any { return []string{"a", "a", "bb", ""}[i%4] },
		"objectids":  func(i int) any { return bson.NewObjectID() },
		"mixed":      func(i int) any { return []any{int32(1), "x", bson.D{{Key: "a", Value: 1}}, nil, true, int64(3)}[i%6] },
		"docsarrays": func(i int) any { return bson.A{i, "x"} },
	}
	for name, gen := range cases {
		for _, sparse := range []bool{false, true} {
			c := &column{}
			for i := 0; i < 700; i++ {
				if sparse && i%3 == 1 {
					continue
				}
				c.pos = append(c.pos, int32(i))
				c.vals = append(c.vals, rv(gen(i)))
			}
			enc := c.encode()
			got, err := decodeColumn(enc)
			if err != nil {
				t.Fatalf("%s sparse=%v: %v", name, sparse, err)
			}
			if len(got.vals) != len(c.vals) {
				t.Fatalf("%s: %d values, want %d", name, len(got.vals), len(c.vals))
			}
			for i := range c.vals {
				if got.pos[i] != c.pos[i] || got.vals[i].Type != c.vals[i].Type || !bytes.Equal(got.vals[i].Value, c.vals[i].Value) {
					t.Fatalf("%s sparse=%v: value %d = %v@%d, want %v@%d", name, sparse, i, got.vals[i], got.pos[i], c.vals[i], c.pos[i])
				}
			}
		}
	}
}

// TestColumnCompresses checks the figures the storage target rests on:
// regular times, decimal readings and driver ObjectIds take about a byte
// or two per value.
func TestColumnCompresses(t *testing.T) {
	c := &column{}
	for i := 0; i < 1000; i++ {
		c.pos = append(c.pos, int32(i))
		c.vals = append(c.vals, rv(bson.DateTime(1700000000000+int64(i)*1000)))
	}
	if n := len(c.encode()); n > 20 {
		t.Fatalf("1000 regular dates take %d bytes", n)
	}
	c = &column{}
	for i := 0; i < 1000; i++ {
		c.pos = append(c.pos, int32(i))
		c.vals = append(c.vals, rv(bson.NewObjectID()))
	}
	if n := len(c.encode()); n > 3100 {
		t.Fatalf("1000 ObjectIds take %d bytes", n)
	}
}

// TestDecodeCorrupt checks that bad compressed input errs, never panics.
func TestDecodeCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := &column{}
	for i := 0; i < 50; i++ {
		c.pos = append(c.pos, int32(i*2))
		c.vals = append(c.vals, rv([]any{int32(i), "s", 1.5, bson.NewObjectID()}[i%4]))
	}
	enc := c.encode()
	for i := 0; i < 5000; i++ {
		b := append([]byte(nil), enc...)
		switch i % 3 {
		case 0:
			b = b[:r.IntN(len(b))]
		case 1:
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		default:
			b = append(b, byte(r.IntN(256)))
		}
		_, _ = decodeColumn(b)
	}
}

// TestBucketRoundTrip checks I3: measurements come back as inserted from
// an open and from a compressed bucket, time first and meta second.
func TestBucketRoundTrip(t *testing.T) {
	o := opts(t, true)
	base := time.Date(2024, 1, 1, 0, 0, 30, 0, time.UTC)
	var want []bson.Raw
	var b *Bucket
	for i := 0; i < 20; i++ {
		d := bson.D{{Key: "_id", Value: i}, {Key: "t", Value: bson.NewDateTimeFromTime(base.Add(time.Duration(i) * time.Second))}, {Key: "m", Value: bson.D{{Key: "z", Value: 1}, {Key: "a", Value: 2}}}}
		if i%2 == 0 {
			d = append(d, bson.E{Key: "v", Value: float64(i) / 4})
		}
		raw, _ := bson.Marshal(d)
		m, err := o.Prepare(raw)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			b = o.NewBucket(m)
		}
		if why := o.Fits(b, m); why != FitsBucket {
			t.Fatalf("measurement %d does not fit: %d", i, why)
		}
		o.Add(b, m)
		exp := bson.D{{Key: "t", Value: d[1].Value}, {Key: "m", Value: bson.D{{Key: "a", Value: 2}, {Key: "z", Value: 1}}}, {Key: "_id", Value: i}}
		if i%2 == 0 {
			exp = append(exp, bson.E{Key: "v", Value: float64(i) / 4})
		}
		e, _ := bson.Marshal(exp)
		want = append(want, e)
	}
	if b.MinTime != base.Truncate(time.Minute).UnixMilli() {
		t.Fatalf("min time %d not rounded to the minute", b.MinTime)
	}
	for _, compressed := range []bool{false, true} {
		doc, err := b.Doc(compressed)
		if err != nil {
			t.Fatal(err)
		}
		back, err := o.Decode(doc)
		if err != nil {
			t.Fatal(err)
		}
		got := o.Measurements(back)
		if len(got) != len(want) {
			t.Fatalf("compressed=%v: %d measurements, want %d", compressed, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("compressed=%v: measurement %d = %v, want %v", compressed, i, got[i], want[i])
			}
		}
	}
}

// TestFitsRules checks mongod's closing rules: count, span, time going
// backward, schema change.
func TestFitsRules(t *testing.T) {
	o := opts(t, false)
	mk := func(sec int, v any) Measurement {
		raw, _ := bson.Marshal(bson.D{{Key: "t", Value: bson.DateTime(int64(sec) * 1000)}, {Key: "v", Value: v}})
		m, _ := o.Prepare(raw)
		return m
	}
	b := o.NewBucket(mk(120, 1))
	o.Add(b, mk(120, 1))
	for _, c := range []struct {
		m    Measurement
		want int
	}{
		{mk(130, 2), FitsBucket},
		{mk(119, 2), CloseTimeBackward},
		{mk(120+3600, 2), CloseTimeForward},
		{mk(130, "s"), CloseSchema},
		{mk(130, int64(5)), FitsBucket},
	} {
		if got := o.Fits(b, c.m); got != c.want {
			t.Fatalf("Fits(%v) = %d, want %d", c.m.Doc, got, c.want)
		}
	}
	for i := 1; i < MaxCount; i++ {
		o.Add(b, mk(121, 1))
	}
	if got := o.Fits(b, mk(130, 1)); got != CloseCount {
		t.Fatalf("a full bucket: Fits = %d", got)
	}
}

// TestBucketFilter checks the bucket-level predicates of meta and time.
func TestBucketFilter(t *testing.T) {
	o := opts(t, true)
	f, _ := bson.Marshal(bson.D{{Key: "m.s", Value: 1}, {Key: "v", Value: 3}, {Key: "t", Value: bson.D{{Key: "$gte", Value: bson.DateTime(7200000)}, {Key: "$lt", Value: bson.DateTime(10800000)}}}})
	got := o.BucketFilter(f)
	want := `{"$and": [{"meta.s": {"$numberInt":"1"}},{"$or": [{"$and": [{"control.min.v": {"$lte": {"$numberInt":"3"}}},{"control.max.v": {"$gte": {"$numberInt":"3"}}}]},{"control.min.v": {"$type": "array"}}]},{"control.max.t": {"$gte": {"$date":{"$numberLong":"7200000"}}}},{"control.min.t": {"$gt": {"$date":{"$numberLong":"3600000"}}}},{"control.min.t": {"$lt": {"$date":{"$numberLong":"10800000"}}}}]}`
	if got.String() != want {
		t.Fatalf("BucketFilter = %s\nwant %s", got, want)
	}
	nf, _ := bson.Marshal(bson.D{{Key: "v.x", Value: 3}, {Key: "w", Value: nil}, {Key: "$expr", Value: true}})
	if o.BucketFilter(nf) != nil {
		t.Fatal("a filter on a dotted measurement path, null or $expr translated")
	}
}

// TestBoundsWholeValues pins the divergence on control bounds of
// embedded documents: whole values in BSON order.
func TestBoundsWholeValues(t *testing.T) {
	o := opts(t, false)
	var b *Bucket
	for i, sub := range []bson.D{{{Key: "a", Value: 2}, {Key: "b", Value: 1}}, {{Key: "a", Value: 1}, {Key: "b", Value: 5}}} {
		raw, _ := bson.Marshal(bson.D{{Key: "t", Value: bson.DateTime(int64(i) * 1000)}, {Key: "x", Value: sub}})
		m, _ := o.Prepare(raw)
		if b == nil {
			b = o.NewBucket(m)
		}
		o.Add(b, m)
	}
	doc, _ := b.Doc(false)
	min := bson.Raw(doc).Lookup("control", "min", "x").Document()
	if min.Lookup("a").Int32() != 1 || min.Lookup("b").Int32() != 5 {
		t.Fatalf("control.min.x = %v, want the whole least value {a: 1, b: 5}", min)
	}
}
