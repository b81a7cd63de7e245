package computed

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Totals is a parent's stored statistics, as Get returns them and as a
// field of the user's parent struct decodes them:
//
//	type Product struct {
//		ID     string          `bson:"_id"`
//		Rating computed.Totals `bson:"rating,omitempty"`
//	}
//
// Statistics the Config does not keep read as zero. Sum is read as a
// double: exact up to 2^53, past which an int64 sum loses precision on
// read only. Min and Max are meaningful only when Count is positive.
//
// Totals encodes (when a new parent is inserted from its struct) only
// what a parent with no children may hold: sum and count, and min and max
// only when Count is positive; with omitempty a zero Totals is left out.
// Never replace a parent from an earlier read: the replacement overwrites
// the increments made since.
type Totals struct {
	Sum   float64 `bson:"sum"`
	Count int64   `bson:"count"`
	Min   float64 `bson:"min"`
	Max   float64 `bson:"max"`
}

// Average returns Sum/Count; ok is false when Count is not positive.
func (t Totals) Average() (avg float64, ok bool) {
	if t.Count <= 0 {
		return 0, false
	}
	return t.Sum / float64(t.Count), true
}

// IsZero reports whether t is the zero Totals, so that omitempty leaves
// it out.
func (t Totals) IsZero() bool { return t == Totals{} }

// MarshalBSON encodes sum and count, and min and max when Count is
// positive: a zero min stored on a parent with no children would stop
// $min from ever recording a larger first value.
func (t Totals) MarshalBSON() ([]byte, error) {
	d := bson.D{{Key: "sum", Value: t.Sum}, {Key: "count", Value: t.Count}}
	if t.Count > 0 {
		d = append(d, bson.E{Key: "min", Value: t.Min}, bson.E{Key: "max", Value: t.Max})
	}
	return bson.Marshal(d)
}

// stored is a parent's totals as stored, with exact numbers.
type stored struct {
	sum      number
	count    int64
	min, max opt
	rev      bson.RawValue // the revision, absent on a parent never written
	id       bson.RawValue // the parent's _id, where a $group found it
}

// totals converts s to the exported form.
func (s stored) totals() Totals {
	t := Totals{Sum: s.sum.float(), Count: s.count}
	if s.min.ok {
		t.Min = s.min.n.float()
	}
	if s.max.ok {
		t.Max = s.max.n.float()
	}
	return t
}

// storedOf reads the stored totals of a parent document; a missing target
// is all zero. A target or field of the wrong type is an error.
func (r *Rollup[P, C]) storedOf(parent bson.Raw) (stored, error) {
	var s stored
	t := lookup(parent, r.cfg.Target)
	if t.Type == 0 {
		return s, nil
	}
	doc, ok := t.DocumentOK()
	if !ok {
		return s, fmt.Errorf("%s is a %s, not a document", r.cfg.Target, t.Type)
	}
	if v, err := doc.LookupErr("sum"); err == nil {
		if s.sum, ok = numberOf(v); !ok {
			return s, fmt.Errorf("%s: %w", r.path("sum"), ErrNotNumber)
		}
	}
	if v, err := doc.LookupErr("count"); err == nil {
		c, ok := numberOf(v)
		if !ok || c.isFloat {
			return s, fmt.Errorf("%s is a %s, not an integer", r.path("count"), v.Type)
		}
		s.count = c.i
	}
	for _, f := range []struct {
		name string
		dst  *opt
	}{{"min", &s.min}, {"max", &s.max}} {
		if v, err := doc.LookupErr(f.name); err == nil {
			n, ok := numberOf(v)
			if !ok {
				return s, fmt.Errorf("%s: %w", r.path(f.name), ErrNotNumber)
			}
			*f.dst = opt{n, true}
		}
	}
	if v, err := doc.LookupErr("rev"); err == nil {
		s.rev = v
	}
	return s, nil
}
