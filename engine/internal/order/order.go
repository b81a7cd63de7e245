package order

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// MaxKeys is the most fields a sort specification may name.
const MaxKeys = 32

// Order is a compiled sort specification.
type Order struct {
	fields  []field
	natural int // 1 or -1 for {$natural: n}, 0 otherwise
	// coll compares strings; nil is the simple collation.
	coll *collation.Collator
}

// WithCollation returns a copy of o that compares strings under c (nil:
// the simple collation). o is not changed.
func (o *Order) WithCollation(c *collation.Collator) *Order {
	cp := *o
	cp.coll = c
	return &cp
}

// Collation returns the collation o compares strings with (nil: simple).
func (o *Order) Collation() *collation.Collator { return o.coll }

type field struct {
	path  string
	parts []string
	dir   int // 1 or -1
}

// Compile turns a sort specification into an Order. An empty spec gives an
// Order under which every document compares equal. Errors
// (*mongoerr.Error): 15974 for a non-numeric, non-object value, 15975 for
// a number other than 1 or -1, 17312 for an object other than {$meta:
// ...}, NotImplemented for $meta, the FieldPath codes (40352, 15998, 16410)
// for bad field names, 2 (BadValue) for more than 32 keys or a $natural
// mixed with other keys.
func Compile(spec bson.Raw) (*Order, error) {
	if err := bsonkit.Validate(spec); err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid sort document: %v", err)
	}
	o := &Order{}
	var err error
	n := 0
	bsonkit.ForEach(spec, func(key string, v bson.RawValue) bool {
		n++
		if key == "$natural" {
			d, ok := direction(v)
			if !ok {
				err = mongoerr.New(mongoerr.BadValue, "$natural sort cannot be set to a value other than -1 or 1.")
				return false
			}
			o.natural = d
			return true
		}
		var d int
		d, err = parseDirection(key, v)
		if err != nil {
			return false
		}
		if err = checkFieldPath(key); err != nil {
			return false
		}
		o.fields = append(o.fields, field{path: key, parts: bsonkit.SplitPath(key), dir: d})
		return true
	})
	if err != nil {
		return nil, err
	}
	if o.natural != 0 && len(o.fields) > 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "$natural sort cannot be combined with other sort keys")
	}
	if n > MaxKeys {
		return nil, mongoerr.Newf(mongoerr.BadValue, "cannot sort with more than %d keys", MaxKeys)
	}
	return o, nil
}

func direction(v bson.RawValue) (int, bool) {
	if !bsonkit.IsNumber(v.Type) {
		return 0, false
	}
	f, _ := bsonkit.Float64(v)
	switch f {
	case 1:
		return 1, true
	case -1:
		return -1, true
	}
	return 0, false
}

func parseDirection(key string, v bson.RawValue) (int, error) {
	if v.Type == bson.TypeEmbeddedDocument {
		first := ""
		bsonkit.ForEach(v.Value, func(k string, _ bson.RawValue) bool {
			first = k
			return false
		})
		if first != "$meta" {
			return 0, mongoerr.New(mongoerr.Code(17312), "$meta is the only expression supported by $sort right now")
		}
		return 0, mongoerr.New(mongoerr.NotImplemented, "sorting by $meta is not supported by Formwork yet")
	}
	if !bsonkit.IsNumber(v.Type) {
		return 0, mongoerr.Newf(mongoerr.Code(15974), "Illegal key in $sort specification: %s: %s", key, v.String())
	}
	d, ok := direction(v)
	if !ok {
		return 0, mongoerr.New(mongoerr.Code(15975), "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
	}
	return d, nil
}

// checkFieldPath applies mongod's FieldPath rules to a sort key.
func checkFieldPath(p string) error {
	if p == "" {
		return mongoerr.New(mongoerr.Code(40352), "FieldPath cannot be constructed with empty string")
	}
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			return mongoerr.New(mongoerr.Code(15998), "FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(part, "$") {
			return mongoerr.New(mongoerr.Code(16410), "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return nil
}

// Natural reports the direction of a {$natural: 1|-1} sort: ok is false
// for any other spec.
func (o *Order) Natural() (dir int, ok bool) { return o.natural, o.natural != 0 }

// Len returns the number of sort keys (0 for an empty or $natural spec).
func (o *Order) Len() int { return len(o.fields) }

// Paths returns the sorted-on field paths in spec order.
func (o *Order) Paths() []string {
	out := make([]string, len(o.fields))
	for i, f := range o.fields {
		out[i] = f.path
	}
	return out
}

// Key is a document's sort key: one value per sort field. Its values alias
// the document it was computed from.
type Key []bson.RawValue

// Key computes doc's sort key. It returns BadValue "cannot sort with keys
// that are parallel arrays" when two sort paths go through different arrays
// of doc.
func (o *Order) Key(doc bson.Raw) (Key, error) {
	if len(o.fields) == 0 {
		return Key{}, nil
	}
	var best Key
	err := o.keys(doc, func(k Key) {
		if best == nil || o.CompareKeys(k, best) < 0 {
			best = append(best[:0], k...)
		}
	})
	if err != nil {
		return nil, err
	}
	return best, nil
}

// CompareKeys orders two keys computed by o.
func (o *Order) CompareKeys(a, b Key) int {
	for i, f := range o.fields {
		if c := bsonkit.CompareWith(a[i], b[i], o.coll); c != 0 {
			return c * f.dir
		}
	}
	return 0
}

// Compare orders two documents under o. A document whose sort paths run
// through parallel arrays gets the key built from each path on its own
// (Compare has no error; callers that must refuse such documents use Key).
func (o *Order) Compare(a, b bson.Raw) int {
	return o.CompareKeys(o.lenientKey(a), o.lenientKey(b))
}

func (o *Order) lenientKey(doc bson.Raw) Key {
	k, err := o.Key(doc)
	if err == nil {
		return k
	}
	out := make(Key, len(o.fields))
	for i, f := range o.fields {
		single := &Order{fields: []field{f}, coll: o.coll}
		sk, err := single.Key(doc)
		if err != nil {
			continue
		}
		out[i] = sk[0]
	}
	return out
}
