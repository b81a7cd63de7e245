package timeseries

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Bucket limits, mongod 7.0's defaults: timeseriesBucketMaxCount,
// timeseriesBucketMaxSize, timeseriesBucketMinCount and
// Bucket::kLargeMeasurementsMaxBucketSize.
const (
	MaxCount      = 1000
	MaxSize       = 128000
	MinCount      = 10
	LargeMaxSize  = 16*1024*1024 - 4*1024*1024
	maxBucketBSON = 16 * 1024 * 1024
	// maxPositions bounds the measurement positions a bucket read from
	// disk (or handed to $_internalUnpackBucket) may name, so unpacking a
	// malformed bucket stays bounded.
	maxPositions = MaxCount * 64
)

// Rollover reasons: why a measurement does not go into the open bucket.
const (
	FitsBucket = iota
	CloseCount
	CloseSize
	CloseTimeForward
	CloseTimeBackward
	CloseSchema
)

// Measurement is one document of a time series prepared for bucketing.
type Measurement struct {
	Doc  bson.Raw
	Time int64         // the timeField, ms since the epoch
	Meta bson.RawValue // the metaField, normalised; Type 0 when absent
	Key  string        // groups measurements of equal meta
}

// Prepare checks a document inserted into a time series and returns it as
// a Measurement: BadValue when the timeField is missing or not a date.
func (o *Options) Prepare(doc bson.Raw) (Measurement, error) {
	t, ok := bsonkit.Field(doc, o.TimeField)
	if !ok || t.Type != bson.TypeDateTime {
		return Measurement{}, mongoerr.Newf(mongoerr.BadValue, "'%s' must be present and contain a valid BSON UTC datetime value", o.TimeField)
	}
	m := Measurement{Doc: doc, Time: t.DateTime()}
	if o.MetaField != "" {
		if v, ok := bsonkit.Field(doc, o.MetaField); ok {
			m.Meta = normalize(v, 0)
			m.Key = string([]byte{byte(m.Meta.Type)}) + string(m.Meta.Value)
		}
	}
	return m, nil
}

// normalize sorts the fields of embedded documents (at any depth, bounded)
// so that metadata equal up to field order lands in one bucket, as mongod
// normalises the bucket's meta.
func normalize(v bson.RawValue, depth int) bson.RawValue {
	if depth > 100 || (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray) {
		return v
	}
	elems, err := bson.Raw(v.Value).Elements()
	if err != nil {
		return v
	}
	type kv struct {
		k string
		v bson.RawValue
	}
	kvs := make([]kv, len(elems))
	for i, e := range elems {
		kvs[i] = kv{e.Key(), normalize(e.Value(), depth+1)}
	}
	if v.Type == bson.TypeEmbeddedDocument {
		sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
	}
	idx, b := bsoncore.AppendDocumentStart(nil)
	for _, e := range kvs {
		b = bsoncore.AppendValueElement(b, e.k, bsoncore.Value{Type: bsoncore.Type(e.v.Type), Data: e.v.Value})
	}
	b, _ = bsoncore.AppendDocumentEnd(b, idx)
	return bson.RawValue{Type: v.Type, Value: b}
}

// Bucket is one bucket document decoded: its measurements by column.
// It is not safe for concurrent use.
type Bucket struct {
	ID      bson.ObjectID
	Meta    bson.RawValue // Type 0: none
	MinTime int64         // control.min of the time field: rounded
	Count   int
	Size    int
	// Compressed reports whether the bucket is (or was read as) closed,
	// version 2.
	Compressed bool
	fields     []string
	cols       map[string]*column
	min, max   map[string]bson.RawValue
}

// NewBucket opens a bucket for m: its minimum time is m's rounded down to
// the bucket rounding, its _id an ObjectId whose timestamp is that time.
func (o *Options) NewBucket(m Measurement) *Bucket {
	r := o.Rounding * 1000
	lo := m.Time - mod(m.Time, r)
	b := &Bucket{Meta: m.Meta, MinTime: lo, cols: map[string]*column{}, min: map[string]bson.RawValue{}, max: map[string]bson.RawValue{}}
	// The _id's timestamp is the minimum time in seconds, clamped to the
	// ObjectId range so that _id bounds (idBound) stay supersets.
	binary.BigEndian.PutUint32(b.ID[:4], uint32(min(max(floorDiv(lo, 1000), 0), math.MaxUint32)))
	_, _ = rand.Read(b.ID[4:])
	return b
}

// mod is a modulo b in [0, b), for times before the epoch too.
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// floorDiv is a / b rounded toward negative infinity.
func floorDiv(a, b int64) int64 { return (a - mod(a, b)) / b }

// Fits reports whether m can join b under o's closing rules, or why not:
// 1,000 measurements, 125 KiB (unless the bucket holds fewer than 10, then
// 12 MiB), a time outside [min, min + bucketMaxSpanSeconds), or a field
// whose type differs from the bucket's (mongod's schema change).
func (o *Options) Fits(b *Bucket, m Measurement) int {
	if b.Compressed {
		return CloseCount
	}
	if b.Count >= MaxCount {
		return CloseCount
	}
	if m.Time < b.MinTime {
		return CloseTimeBackward
	}
	if m.Time >= b.MinTime+o.MaxSpan*1000 {
		return CloseTimeForward
	}
	size := len(m.Doc)
	if b.Size+size > MaxSize && (b.Count >= MinCount || b.Size+size > LargeMaxSize) {
		return CloseSize
	}
	schema := true
	bsonkit.ForEach(m.Doc, func(k string, v bson.RawValue) bool {
		if k == o.MetaField && o.MetaField != "" {
			return true
		}
		if lo, ok := b.min[k]; ok && bsonkit.CanonicalType(lo.Type) != bsonkit.CanonicalType(v.Type) {
			schema = false
		}
		return schema
	})
	if !schema {
		return CloseSchema
	}
	return FitsBucket
}

// Add appends m to b (the caller checked Fits).
//
// Divergence: mongod computes control.min and control.max of embedded
// documents field by field (and of arrays element by element); the engine
// keeps the least and greatest whole value in BSON order. Bucket-level
// predicates only read control bounds of the time field, so query results
// are the same; a raw bucket shows different bounds for such fields.
// Tested by TestBoundsWholeValues.
func (o *Options) Add(b *Bucket, m Measurement) {
	pos := int32(b.Count)
	bsonkit.ForEach(m.Doc, func(k string, v bson.RawValue) bool {
		if k == o.MetaField && o.MetaField != "" {
			return true
		}
		c := b.cols[k]
		if c == nil {
			c = &column{}
			b.cols[k] = c
			b.fields = append(b.fields, k)
		}
		c.pos = append(c.pos, pos)
		c.vals = append(c.vals, v)
		if k == o.TimeField {
			if _, ok := b.min[k]; !ok {
				b.min[k] = dateValue(b.MinTime)
			}
			if mx, ok := b.max[k]; !ok || mx.DateTime() < m.Time {
				b.max[k] = v
			}
			return true
		}
		if lo, ok := b.min[k]; !ok || bsonkit.Compare(v, lo) < 0 {
			b.min[k] = v
		}
		if hi, ok := b.max[k]; !ok || bsonkit.Compare(v, hi) > 0 {
			b.max[k] = v
		}
		return true
	})
	b.Count++
	b.Size += len(m.Doc)
}

// dateValue is ms as a BSON date.
func dateValue(ms int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: binary.LittleEndian.AppendUint64(nil, uint64(ms))}
}

// Doc returns b as a bucket document: version 1 with one sub-document per
// field ({"0": v, "1": v, …}) while open, version 2 with control.count
// and compressed columns once compressed. BSONObjectTooLarge when the
// document would pass 16 MiB.
func (b *Bucket) Doc(compressed bool) (bson.Raw, error) {
	// Room for the whole document up front: an open bucket is rewritten
	// on every insert, and growing the buffer step by step copied it
	// several times over.
	out := make([]byte, 0, 256+b.Size+8*b.Count*len(b.fields))
	var ibuf []byte
	idx, out := bsoncore.AppendDocumentStart(out)
	out = bsoncore.AppendObjectIDElement(out, "_id", b.ID)
	cidx, out := bsoncore.AppendDocumentElementStart(out, "control")
	version := int32(1)
	if compressed {
		version = 2
	}
	out = bsoncore.AppendInt32Element(out, "version", version)
	out = b.appendBounds(out, "min", b.min)
	out = b.appendBounds(out, "max", b.max)
	if compressed {
		out = bsoncore.AppendInt32Element(out, "count", int32(b.Count))
	}
	out, _ = bsoncore.AppendDocumentEnd(out, cidx)
	if b.Meta.Type != 0 {
		out = bsoncore.AppendValueElement(out, "meta", bsoncore.Value{Type: bsoncore.Type(b.Meta.Type), Data: b.Meta.Value})
	}
	didx, out := bsoncore.AppendDocumentElementStart(out, "data")
	for _, f := range b.fields {
		c := b.cols[f]
		if compressed {
			out = bsoncore.AppendBinaryElement(out, f, ColumnSubtype, c.encode())
			continue
		}
		fidx, o2 := bsoncore.AppendDocumentElementStart(out, f)
		out = o2
		for i, v := range c.vals {
			ibuf = strconv.AppendInt(ibuf[:0], int64(c.pos[i]), 10)
			out = append(out, byte(v.Type))
			out = append(out, ibuf...)
			out = append(out, 0)
			out = append(out, v.Value...)
		}
		out, _ = bsoncore.AppendDocumentEnd(out, fidx)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, didx)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	if len(out) > maxBucketBSON {
		return nil, mongoerr.Newf(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", len(out), len(out))
	}
	return out, nil
}

// appendBounds appends control.min or control.max (from m) in the order
// of the data fields.
func (b *Bucket) appendBounds(out []byte, name string, m map[string]bson.RawValue) []byte {
	idx, out := bsoncore.AppendDocumentElementStart(out, name)
	for _, f := range b.fields {
		if v, ok := m[f]; ok {
			out = bsoncore.AppendValueElement(out, f, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// Decode reads a bucket document of either version. It returns
// InvalidBSON-coded errors for a document that is not a bucket of o.
func (o *Options) Decode(doc bson.Raw) (*Bucket, error) {
	bad := func(why string) error {
		return mongoerr.Newf(mongoerr.Code(5857400), "Invalid time series bucket: %s", why)
	}
	b := &Bucket{cols: map[string]*column{}, min: map[string]bson.RawValue{}, max: map[string]bson.RawValue{}}
	if id, ok := bsonkit.Field(doc, "_id"); ok && id.Type == bson.TypeObjectID {
		copy(b.ID[:], id.Value)
	}
	ctl, ok := bsonkit.Field(doc, "control")
	if !ok || ctl.Type != bson.TypeEmbeddedDocument {
		return nil, bad("no control document")
	}
	ver, _ := bsonkit.Field(ctl.Value, "version")
	v, _ := bsonkit.TruncInt64(ver)
	b.Compressed = v == 2
	for _, side := range []struct {
		name string
		m    map[string]bson.RawValue
	}{{"min", b.min}, {"max", b.max}} {
		if d, ok := bsonkit.Field(ctl.Value, side.name); ok && d.Type == bson.TypeEmbeddedDocument {
			bsonkit.ForEach(d.Value, func(k string, v bson.RawValue) bool {
				side.m[k] = v
				return true
			})
		}
	}
	if t, ok := b.min[o.TimeField]; ok && t.Type == bson.TypeDateTime {
		b.MinTime = t.DateTime()
	}
	if m, ok := bsonkit.Field(doc, "meta"); ok {
		b.Meta = m
	}
	data, ok := bsonkit.Field(doc, "data")
	if !ok || data.Type != bson.TypeEmbeddedDocument {
		return nil, bad("no data document")
	}
	var err error
	bsonkit.ForEach(data.Value, func(k string, v bson.RawValue) bool {
		var c *column
		switch v.Type {
		case bson.TypeBinary:
			st, payload := v.Binary()
			if st != ColumnSubtype {
				err = bad("column " + k + " is not in the engine's format")
				return false
			}
			c, err = decodeColumn(payload)
		case bson.TypeEmbeddedDocument:
			c = &column{}
			bsonkit.ForEach(v.Value, func(ik string, iv bson.RawValue) bool {
				n, e := strconv.Atoi(ik)
				if e != nil || n < 0 || n >= maxPositions || (len(c.pos) > 0 && int32(n) <= c.pos[len(c.pos)-1]) {
					err = bad("column " + k + " has a bad index")
					return false
				}
				c.pos = append(c.pos, int32(n))
				c.vals = append(c.vals, iv)
				return true
			})
		default:
			err = bad("column " + k + " is neither an object nor BinData")
		}
		if err != nil {
			return false
		}
		b.fields = append(b.fields, k)
		b.cols[k] = c
		return true
	})
	if err != nil {
		return nil, err
	}
	tc := b.cols[o.TimeField]
	if tc == nil {
		return nil, bad("no time column")
	}
	b.Count = len(tc.vals)
	if n := len(tc.pos); n > 0 {
		b.Count = max(b.Count, int(tc.pos[n-1])+1)
	}
	for _, c := range b.cols {
		for _, v := range c.vals {
			b.Size += len(v.Value) + 8
		}
	}
	return b, nil
}

// MaxTime returns control.max of the time field (ms), or MinTime.
func (b *Bucket) MaxTime(o *Options) int64 {
	if v, ok := b.max[o.TimeField]; ok && v.Type == bson.TypeDateTime {
		return v.DateTime()
	}
	return b.MinTime
}

// Fields returns the bucket's data fields in order.
func (b *Bucket) Fields() []string { return slices.Clone(b.fields) }
