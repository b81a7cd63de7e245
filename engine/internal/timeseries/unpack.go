package timeseries

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Unpacker yields the measurements of one bucket in insertion order, as
// mongod's BucketUnpacker builds them: the time field first, then the
// meta field (when the bucket has one), then the other fields in the
// order of the bucket's data columns.
type Unpacker struct {
	o      *Options
	b      *Bucket
	i      int
	cursor map[string]int
	keep   func(field string) bool
}

// Unpack returns an Unpacker over b. keep, when not nil, selects the
// fields to build (the meta field is asked for by its user-facing name).
func (o *Options) Unpack(b *Bucket, keep func(field string) bool) *Unpacker {
	return &Unpacker{o: o, b: b, cursor: make(map[string]int, len(b.fields)), keep: keep}
}

// Next returns the next measurement, or nil at the end.
func (u *Unpacker) Next() bson.Raw {
	for u.i < u.b.Count {
		d, ok := u.build(u.i)
		u.i++
		if ok {
			return d
		}
	}
	return nil
}

// build returns measurement i; ok is false when the time column has no
// value there (a position deleted from an uncompressed bucket).
func (u *Unpacker) build(i int) (bson.Raw, bool) {
	tf := u.o.TimeField
	tv, ok := u.at(tf, i)
	if !ok {
		return nil, false
	}
	idx, out := bsoncore.AppendDocumentStart(nil)
	if u.want(tf) {
		out = appendValue(out, tf, tv)
	}
	if u.o.MetaField != "" && u.b.Meta.Type != 0 && u.want(u.o.MetaField) {
		out = appendValue(out, u.o.MetaField, u.b.Meta)
	}
	for _, f := range u.b.fields {
		if f == tf {
			continue
		}
		v, ok := u.at(f, i)
		if ok && u.want(f) {
			out = appendValue(out, f, v)
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, true
}

// want reports whether field f is to be built.
func (u *Unpacker) want(f string) bool { return u.keep == nil || u.keep(f) }

// at returns field f of measurement i, advancing that column's cursor
// (measurements are built in increasing i).
func (u *Unpacker) at(f string, i int) (bson.RawValue, bool) {
	c := u.b.cols[f]
	if c == nil {
		return bson.RawValue{}, false
	}
	j := u.cursor[f]
	for j < len(c.pos) && int(c.pos[j]) < i {
		j++
	}
	u.cursor[f] = j
	if j < len(c.pos) && int(c.pos[j]) == i {
		return c.vals[j], true
	}
	return bson.RawValue{}, false
}

// appendValue appends the element k: v.
func appendValue(out []byte, k string, v bson.RawValue) []byte {
	return bsoncore.AppendValueElement(out, k, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
}

// Measurements returns all of b's measurements.
func (o *Options) Measurements(b *Bucket) []bson.Raw {
	u := o.Unpack(b, nil)
	var out []bson.Raw
	for d := u.Next(); d != nil; d = u.Next() {
		out = append(out, d)
	}
	return out
}

// Rebuild returns a bucket with b's identity (_id, meta, minimum time)
// holding only the measurements ms, compressed or not as b was; it is how
// a delete removes some measurements of a bucket. Control bounds are
// recomputed from ms.
func (o *Options) Rebuild(b *Bucket, ms []bson.Raw) *Bucket {
	nb := &Bucket{ID: b.ID, Meta: b.Meta, MinTime: b.MinTime, Compressed: b.Compressed, cols: map[string]*column{}, min: map[string]bson.RawValue{}, max: map[string]bson.RawValue{}}
	for _, d := range ms {
		m, err := o.Prepare(d)
		if err != nil {
			continue
		}
		o.Add(nb, m)
	}
	return nb
}
