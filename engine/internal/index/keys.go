package index

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Index is a compiled Spec: it turns documents into index keys. An Index is
// immutable and safe for concurrent use.
type Index struct {
	spec    Spec
	parts   [][]string // per key pattern field; nil for the wildcard field
	dirs    []bool     // per encoded column (see Columns)
	wild    int        // position of the wildcard field, -1 if none
	proj    *projection
	partial *filterNode
	// coll encodes string values by their collation sort key (nil:
	// simple), as mongod's CollationIndexKey does.
	coll *collation.Collator
}

// Collator returns the index's collator, nil for the simple collation.
func (ix *Index) Collator() *collation.Collator { return ix.coll }

// Multikey describes which indexed paths of one document held arrays.
type Multikey struct {
	// Paths has one entry per key pattern field: the sorted indexes of the
	// dotted path's components at which an array with more than one
	// element was expanded (mongod's MultikeyPaths). Nil entries mean the
	// field was not multikey. Nil for a wildcard index.
	Paths [][]int
	// Wildcard lists, for a wildcard index, the sorted dotted paths whose
	// value was an array (mongod's multikey metadata keys).
	Wildcard []string
}

// Any reports whether any path was multikey.
func (m Multikey) Any() bool {
	for _, p := range m.Paths {
		if len(p) > 0 {
			return true
		}
	}
	return len(m.Wildcard) > 0
}

// Compile validates s's key pattern and partial filter again and returns
// the compiled index. It returns the errors ParseSpec returns for them;
// specs from ParseSpec always compile.
func Compile(s Spec) (*Index, error) {
	ix := &Index{spec: s, wild: -1}
	for i, f := range s.Fields {
		if f.Wildcard {
			ix.wild = i
			ix.parts = append(ix.parts, nil)
			ix.dirs = append(ix.dirs, false, f.Desc)
			continue
		}
		ix.parts = append(ix.parts, strings.Split(f.Path, "."))
		ix.dirs = append(ix.dirs, f.Desc)
	}
	if len(s.Fields) == 0 {
		return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index keys cannot be empty.")
	}
	if s.Collation != nil {
		c, err := collation.Parse(s.Collation)
		if err != nil {
			return nil, err
		}
		ix.coll = c
	}
	if ix.wild >= 0 {
		p, err := compileProjection(s)
		if err != nil {
			return nil, err
		}
		ix.proj = p
	}
	if s.PartialFilterExpression != nil {
		f, err := parseFilter(s.PartialFilterExpression)
		if err != nil {
			return nil, err
		}
		if err := checkPartialSupported(f, 0); err != nil {
			return nil, err
		}
		ix.partial = f
	}
	return ix, nil
}

// Spec returns the index definition.
func (ix *Index) Spec() Spec { return ix.spec }

// Columns returns the directions of the encoded values that make up a key,
// for keystring.Decode: one per key pattern field, except that a wildcard
// field contributes two, the field path (a string, ascending) and the value.
func (ix *Index) Columns() []bool { return append([]bool(nil), ix.dirs...) }

// Keys returns the keys of doc for this index, sorted and without
// duplicates, and the paths that were multikey. Each key is the
// concatenation of keystring encodings, one per column (see Columns), and
// holds no record ID (see the package doc for the storage layout). Keys
// returns no keys when the partial filter does not match doc or when a
// sparse index finds none of its fields, and InvalidBSON (22) for a
// malformed document; missing fields index as null and
// empty arrays as undefined. A document with arrays at two indexed paths
// that are not nested in one another returns CannotIndexParallelArrays
// (171). Keys does not retain doc; the keys are freshly allocated.
//
// Following mongod's BtreeKeyGenerator and WildcardKeyGenerator.
func (ix *Index) Keys(doc bson.Raw) ([][]byte, Multikey, error) {
	if err := validateDoc(doc); err != nil {
		return nil, Multikey{}, err
	}
	return ix.KeysValidated(doc)
}

// KeysValidated is Keys for a document Validate accepted: a writer that
// computes the keys of one document for several indexes checks the
// document once rather than once per index.
func (ix *Index) KeysValidated(doc bson.Raw) ([][]byte, Multikey, error) {
	if ix.wild < 0 && ix.partial == nil && len(ix.parts) == 1 {
		if v, ok := scalarAt(doc, ix.parts[0]); ok {
			// The common case (one field, no array on its path) has one
			// key and no multikey path: the same answer as tuples gives,
			// without building cursors and tuples.
			// One allocation holds the key list, the key and the
			// multikey paths.
			o := new(singleKey)
			mk := Multikey{Paths: o.paths[:]}
			if v.Type == 0 && ix.spec.Sparse {
				return nil, mk, nil
			}
			t := [1]bson.RawValue{v}
			o.keys[0] = ix.appendKey(o.key[:0], t[:])
			return o.keys[:], mk, nil
		}
	}
	return ix.keysFromTuples(doc)
}

// singleKey is the storage of KeysValidated's answer for a single-field
// index: most keys fit in key.
type singleKey struct {
	keys  [1][]byte
	paths [1][]int
	key   [24]byte
}

// keysFromTuples is KeysValidated through the general key generation.
func (ix *Index) keysFromTuples(doc bson.Raw) ([][]byte, Multikey, error) {
	tuples, mk, err := ix.tuples(doc)
	if err != nil || len(tuples) == 0 {
		return nil, mk, err
	}
	keys := make([][]byte, 0, len(tuples))
	for _, t := range tuples {
		keys = append(keys, ix.encode(t))
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	out := keys[:1]
	for _, k := range keys[1:] {
		if !bytes.Equal(k, out[len(out)-1]) {
			out = append(out, k)
		}
	}
	return out, mk, nil
}

// Matches reports whether doc belongs in the index: true unless a partial
// filter rejects it.
func (ix *Index) Matches(doc bson.Raw) bool {
	return ix.partial == nil || ix.partial.match(doc)
}

var nullValue = bson.RawValue{Type: bson.TypeNull}

// encode encodes one tuple; missing values (Type 0) encode as null.
func (ix *Index) encode(t []bson.RawValue) []byte {
	return ix.appendKey(make([]byte, 0, 16*len(t)), t)
}

// appendKey appends the encoding of tuple t to k.
func (ix *Index) appendKey(k []byte, t []bson.RawValue) []byte {
	for i, v := range t {
		if v.Type == 0 {
			v = nullValue
		}
		if ix.coll != nil && (ix.wild < 0 || i != ix.wild) {
			v = bsonkit.CollationKeyed(v, ix.coll)
		}
		k = keystring.AppendValue(k, v, ix.dirs[i])
	}
	return k
}

// scalarAt returns the value at the dotted path parts of doc (Type 0 when
// it is missing), or false when the path meets an array, which the
// general key generation (tuples) must expand.
func scalarAt(doc bson.Raw, parts []string) (bson.RawValue, bool) {
	v := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	for _, p := range parts {
		switch v.Type {
		case bson.TypeArray:
			return bson.RawValue{}, false
		case bson.TypeEmbeddedDocument:
		default:
			return bson.RawValue{}, true
		}
		child, err := bson.Raw(v.Value).LookupErr(p)
		if err != nil {
			return bson.RawValue{}, true
		}
		v = child
	}
	return v, v.Type != bson.TypeArray
}

// tuples returns the unencoded keys of doc, one value per column.
// doc has been validated (validateDoc).
func (ix *Index) tuples(doc bson.Raw) ([][]bson.RawValue, Multikey, error) {
	if !ix.Matches(doc) {
		return nil, Multikey{}, nil
	}
	g := &keyGen{ix: ix, mk: make([]map[int]bool, len(ix.parts))}
	cs := make([]cursor, len(ix.parts))
	for f := range cs {
		if ix.parts[f] == nil {
			cs[f] = cursor{done: true} // the wildcard field is generated below
			continue
		}
		cs[f] = cursor{val: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}}
	}
	if err := g.step(cs); err != nil {
		return nil, Multikey{}, err
	}
	var mk Multikey
	if ix.wild < 0 {
		mk.Paths = make([][]int, len(ix.parts))
		for f, set := range g.mk {
			for c := range set {
				mk.Paths[f] = append(mk.Paths[f], c)
			}
			sort.Ints(mk.Paths[f])
		}
	}
	tuples := g.out
	if ix.spec.Sparse {
		kept := tuples[:0]
		for _, t := range tuples {
			for _, v := range t {
				if v.Type != 0 {
					kept = append(kept, t)
					break
				}
			}
		}
		tuples = kept
	}
	if ix.wild >= 0 {
		for f, set := range g.mk {
			if f != ix.wild && len(set) > 0 {
				return nil, Multikey{}, mongoerr.Newf(compoundWildcardMultikey,
					"Compound wildcard indexes do not allow multikey non-wildcard fields, but field '%s' is an array", ix.spec.Fields[f].Path)
			}
		}
		pairs, arrays := ix.proj.pairs(doc)
		mk.Wildcard = arrays
		tuples = expandWildcard(tuples, ix.wild, pairs, len(ix.parts) > 1)
	}
	return tuples, mk, nil
}

// compoundWildcardMultikey is mongod's code for an array in a regular field
// of a compound wildcard index (an assertion id without a codeName).
const compoundWildcardMultikey = mongoerr.Code(7246301)

// expandWildcard replaces the wildcard column of each tuple by the (path,
// value) pairs. A compound wildcard index keeps documents without any
// wildcard path under a (MinKey, MinKey) placeholder so that queries on its
// regular fields still find them.
func expandWildcard(tuples [][]bson.RawValue, at int, pairs [][2]bson.RawValue, compound bool) [][]bson.RawValue {
	if len(pairs) == 0 {
		if !compound {
			return nil
		}
		minKey := bson.RawValue{Type: bson.TypeMinKey}
		pairs = [][2]bson.RawValue{{minKey, minKey}}
	}
	var out [][]bson.RawValue
	for _, t := range tuples {
		for _, p := range pairs {
			row := make([]bson.RawValue, 0, len(t)+1)
			row = append(row, t[:at]...)
			row = append(row, p[0], p[1])
			row = append(row, t[at+1:]...)
			out = append(out, row)
		}
	}
	return out
}

// cursor is the progress of one key pattern field through a document.
type cursor struct {
	val     bson.RawValue
	i       int   // next path component to look up in val
	fromExp bool  // val is an element of an expanded array
	viaPos  bool  // val was reached through a positional component
	touched *byte // an array this field indexed positionally
	done    bool
	out     bson.RawValue // the key value once done; Type 0 is missing
}

type keyGen struct {
	ix  *Index
	mk  []map[int]bool
	out [][]bson.RawValue
}

// hit is an array a field must expand.
type hit struct {
	arr      bson.RawValue
	terminal bool
	comp     int // path component whose value is arr
}

// step advances every field to its next array, expands that array (all
// fields that reach an array must reach the same one) and recurses; when no
// field reaches an array it emits one tuple.
func (g *keyGen) step(cs []cursor) error {
	hits := make([]*hit, len(cs))
	for f := range cs {
		if cs[f].done {
			continue
		}
		h, err := g.advance(&cs[f], g.ix.parts[f])
		if err != nil {
			return err
		}
		hits[f] = h
	}
	var (
		sig    *byte
		sigF   = -1
		shared *hit
	)
	for f := range cs {
		var s *byte
		switch {
		case hits[f] != nil:
			s = &hits[f].arr.Value[0]
		case cs[f].touched != nil:
			s = cs[f].touched
		default:
			continue
		}
		if sig == nil {
			sig, sigF = s, f
		} else if s != sig {
			return mongoerr.Newf(mongoerr.CannotIndexParallelArrays, "cannot index parallel arrays [%s] [%s]",
				g.arrayName(f, hits[f], cs[f]), g.arrayName(sigF, hits[sigF], cs[sigF]))
		}
		if hits[f] != nil {
			shared = hits[f]
		}
	}
	if shared == nil {
		row := make([]bson.RawValue, len(cs))
		for f := range cs {
			row[f] = cs[f].out
		}
		g.out = append(g.out, row)
		return nil
	}
	elems, _ := bson.RawArray(shared.arr.Value).Values()
	for f, h := range hits {
		if h != nil && len(elems) > 1 {
			if g.mk[f] == nil {
				g.mk[f] = map[int]bool{}
			}
			g.mk[f][h.comp] = true
		}
	}
	if len(elems) == 0 {
		elems = []bson.RawValue{{}}
	}
	for _, e := range elems {
		next := append([]cursor(nil), cs...)
		for f, h := range hits {
			if h == nil {
				continue
			}
			c := &next[f]
			c.touched = nil
			switch {
			case h.terminal && e.Type == 0:
				c.done, c.out = true, bson.RawValue{Type: bson.TypeUndefined}
			case h.terminal:
				c.done, c.out = true, e
			case e.Type == 0:
				c.done, c.out = true, bson.RawValue{}
			default:
				c.val, c.fromExp, c.viaPos = e, true, false
			}
		}
		if err := g.step(next); err != nil {
			return err
		}
	}
	return nil
}

// arrayName names the array field f reached, for the parallel arrays
// message.
func (g *keyGen) arrayName(f int, h *hit, c cursor) string {
	parts := g.ix.parts[f]
	if h != nil {
		return parts[h.comp]
	}
	if c.i >= 2 && c.i-2 < len(parts) {
		return parts[c.i-2]
	}
	return parts[0]
}

// advance follows c's path through documents until it reaches the end,
// a missing field, or an array to expand.
func (g *keyGen) advance(c *cursor, parts []string) (*hit, error) {
	for {
		if c.i == len(parts) {
			if c.val.Type == bson.TypeArray && !c.fromExp && !c.viaPos {
				return &hit{arr: c.val, terminal: true, comp: len(parts) - 1}, nil
			}
			c.done, c.out = true, c.val
			if c.viaPos && c.val.Type == bson.TypeArray && len(c.val.Value) <= 5 {
				c.out = bson.RawValue{Type: bson.TypeUndefined}
			}
			return nil, nil
		}
		switch c.val.Type {
		case bson.TypeEmbeddedDocument:
			child, err := bson.Raw(c.val.Value).LookupErr(parts[c.i])
			if err != nil {
				c.done, c.out = true, bson.RawValue{}
				return nil, nil
			}
			c.val, c.i, c.fromExp, c.viaPos = child, c.i+1, false, false
		case bson.TypeArray:
			if c.fromExp {
				c.done, c.out = true, bson.RawValue{}
				return nil, nil
			}
			elems, _ := bson.RawArray(c.val.Value).Values()
			if idx, ok := arrayIndex(parts[c.i]); ok && idx < len(elems) {
				for _, e := range elems {
					if d, ok := e.DocumentOK(); ok && d.Lookup(parts[c.i]).Type != 0 {
						return nil, mongoerr.Newf(mongoerr.Code(16746),
							"Ambiguous field name found in array (do not use numeric field names in embedded elements in an array), field: '%s' , array: %s",
							parts[c.i], formatValue(c.val))
					}
				}
				c.touched = &c.val.Value[0]
				c.val, c.i, c.viaPos = elems[idx], c.i+1, true
				continue
			}
			return &hit{arr: c.val, comp: c.i - 1}, nil
		default:
			c.done, c.out = true, bson.RawValue{}
			return nil, nil
		}
	}
}

// arrayIndex parses a path component as an array index: decimal digits
// without a leading zero (except "0").
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	return n, true
}
