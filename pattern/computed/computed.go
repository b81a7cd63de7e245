package computed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ErrParentNotFound is wrapped by the verbs given a parent _id that does
// not exist.
var ErrParentNotFound = errors.New("parent document not found")

// ErrSourceNotFound is wrapped by Edit and Delete given a source _id that
// does not exist.
var ErrSourceNotFound = errors.New("source document not found")

// ErrNotNumber is wrapped when a value to sum is not an int32, int64 or
// double.
var ErrNotNumber = errors.New("value is not an int32, int64 or double")

// ErrContention is wrapped by Recompute when concurrent increments changed
// the total on every one of maxAttempts attempts.
var ErrContention = errors.New("total changed concurrently on every attempt")

// maxAttempts bounds the compare-and-set loop of Recompute.
const maxAttempts = 16

// Config describes one maintained average.
type Config struct {
	// Parent is the source field holding the parent's _id, e.g. "productId".
	// It must hold values of the same BSON type as the parents' _ids.
	Parent string
	// Value is the source field summed, e.g. "stars".
	Value string
	// Target is the parent field holding {sum, count}, e.g. "rating".
	Target string
}

// Validate reports the first empty, dotted or $-prefixed field name, an
// "_id" field, or two fields with the same name.
func (c Config) Validate() error {
	for _, f := range []struct{ name, v string }{{"Parent", c.Parent}, {"Value", c.Value}, {"Target", c.Target}} {
		if f.v == "" {
			return fmt.Errorf("computed: config: %s: empty field name", f.name)
		}
		if strings.ContainsAny(f.v, ".$") || f.v == "_id" {
			return fmt.Errorf("computed: config: %s: %q must be a top-level field other than _id", f.name, f.v)
		}
	}
	if c.Parent == c.Value {
		return errors.New("computed: config: Parent and Value name the same field")
	}
	return nil
}

// Mean maintains, in each parent, the sum and count of a value of its
// source documents. It holds no state besides its configuration and is
// safe for concurrent use.
type Mean struct {
	parents *mongo.Collection
	sources *mongo.Collection
	cfg     Config
}

// New returns a Mean over the given parent and source collections. It
// returns cfg.Validate's error.
func New(parents, sources *mongo.Collection, cfg Config) (*Mean, error) {
	if parents == nil || sources == nil {
		return nil, errors.New("computed: new: nil collection")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Mean{parents: parents, sources: sources, cfg: cfg}, nil
}

// EnsureIndexes creates {<Parent>: 1} on the source collection. It is
// idempotent.
func (m *Mean) EnsureIndexes(ctx context.Context) error {
	_, err := m.sources.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: m.cfg.Parent, Value: 1}}})
	if err != nil {
		return fmt.Errorf("computed: ensure indexes: %w", err)
	}
	return nil
}

// sumPath and countPath are the dotted paths of the stored total.
func (m *Mean) sumPath() string   { return m.cfg.Target + ".sum" }
func (m *Mean) countPath() string { return m.cfg.Target + ".count" }

// Total is a parent's stored sum and count. Sum is read as a double:
// exact up to 2^53, which an int64 sum past that loses on read only.
type Total struct {
	Sum   float64
	Count int64
}

// Average returns Sum/Count; ok is false when Count is not positive.
func (t Total) Average() (avg float64, ok bool) {
	if t.Count <= 0 {
		return 0, false
	}
	return t.Sum / float64(t.Count), true
}

// number is a summable BSON number: an exact integer or a double.
type number struct {
	i       int64
	f       float64
	isFloat bool
}

// numberOf reads an int32, int64 or double.
func numberOf(v bson.RawValue) (number, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return number{i: int64(v.Int32())}, true
	case bson.TypeInt64:
		return number{i: v.Int64()}, true
	case bson.TypeDouble:
		return number{f: v.Double(), isFloat: true}, true
	}
	return number{}, false
}

// float returns n as a double.
func (n number) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

// add returns n+o, a double when either is.
func (n number) add(o number) number {
	if n.isFloat || o.isFloat {
		return number{f: n.float() + o.float(), isFloat: true}
	}
	return number{i: n.i + o.i}
}

// neg returns -n.
func (n number) neg() number { return number{i: -n.i, f: -n.f, isFloat: n.isFloat} }

// zero reports whether n is 0.
func (n number) zero() bool { return (n.isFloat && n.f == 0) || (!n.isFloat && n.i == 0) }

// value is what the driver writes: int64 or float64.
func (n number) value() any {
	if n.isFloat {
		return n.f
	}
	return n.i
}

// close reports whether two sums agree: integers exactly, doubles within
// a relative 1e-9, the rounding that summing in another order can cause.
func (n number) close(o number) bool {
	if !n.isFloat && !o.isFloat {
		return n.i == o.i
	}
	a, b := n.float(), o.float()
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// totalOf reads the stored {sum, count} of a parent document; a missing
// target is zero.
func (m *Mean) totalOf(parent bson.Raw) (sum number, count int64, err error) {
	t, lerr := parent.LookupErr(m.cfg.Target)
	if lerr != nil {
		return number{}, 0, nil
	}
	doc, ok := t.DocumentOK()
	if !ok {
		return number{}, 0, fmt.Errorf("%s is a %s, not a document", m.cfg.Target, t.Type)
	}
	if v, err := doc.LookupErr("sum"); err == nil {
		if sum, ok = numberOf(v); !ok {
			return number{}, 0, fmt.Errorf("%s: %w", m.sumPath(), ErrNotNumber)
		}
	}
	if v, err := doc.LookupErr("count"); err == nil {
		c, ok := numberOf(v)
		if !ok || c.isFloat {
			return number{}, 0, fmt.Errorf("%s is not an integer", m.countPath())
		}
		count = c.i
	}
	return sum, count, nil
}

// parentKey maps a parent _id to a map key. Numbers with an integral value
// share a key whatever their BSON type, as they do in an equality match.
func parentKey(v bson.RawValue) string {
	if n, ok := numberOf(v); ok {
		if !n.isFloat {
			return "n" + strconv.FormatInt(n.i, 10)
		}
		if n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<62 {
			return "n" + strconv.FormatInt(int64(n.f), 10)
		}
		return "d" + strconv.FormatFloat(n.f, 'g', -1, 64)
	}
	return string(rune(v.Type)) + string(v.Value)
}
