package plan

import (
	"bytes"
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

type scanState int

const (
	scanInit scanState = iota
	scanNext
	scanSeek
	scanEnd
)

// ixScan walks an index within bounds (IXSCAN). Bounds that are one
// interval after point prefixes become a single byte range whose end the
// iterator enforces; other bounds go through a checker that examines every
// key it lands on and seeks over gaps, as mongod's IndexBoundsChecker does
// (I3).
type ixScan struct {
	counters_ counters
	env       *env
	ix        *indexInfo
	bounds    []oil // per key field, ascending value order
	dir       int
	fb        [][]byteInterval
	simple    bool
	lo, hi    []byte
	empty     bool

	keyFilter  *match.Filter
	keyFilterX *expr

	it      *storage.Entries
	st      scanState
	seekLo  []byte
	seekHi  []byte
	seen    map[int64]struct{}
	dedup   bool
	keys    int64
	seeks   int64
	tested  int64
	dropped int64
}

func newIXScan(e *env, ix *indexInfo, a *assignment, dir int) *ixScan {
	bounds := a.bounds
	s := &ixScan{env: e, ix: ix, bounds: bounds, dir: dir, dedup: ix.multikey || a.dedup}
	if s.dedup {
		s.seen = map[int64]struct{}{}
	}
	for i, o := range bounds {
		if len(o) == 0 {
			s.empty = true
		}
		s.fb = append(s.fb, o.toBytes(ix.desc[i]))
	}
	s.simple, s.lo, s.hi = singleRange(s.fb)
	return s
}

// singleRange reports whether the bounds are points, then at most one
// interval, then all values (mongod's isSingleInterval), and returns the
// byte range [lo, hi) they cover (hi nil: to the end).
func singleRange(fb [][]byteInterval) (bool, []byte, []byte) {
	var prefix []byte
	i := 0
	for ; i < len(fb); i++ {
		if len(fb[i]) != 1 || !fb[i][0].loInc || !fb[i][0].hiInc || !bytes.Equal(fb[i][0].lo, fb[i][0].hi) {
			break
		}
		prefix = append(prefix, fb[i][0].lo...)
	}
	if i == len(fb) {
		return true, prefix, keystring.PrefixEnd(prefix)
	}
	if len(fb[i]) != 1 {
		return false, nil, nil
	}
	iv := fb[i][0]
	for j := i + 1; j < len(fb); j++ {
		if len(fb[j]) != 1 || !isAllBytes(fb[j][0]) {
			return false, nil, nil
		}
	}
	lo := append(append([]byte(nil), prefix...), iv.lo...)
	if !iv.loInc {
		lo = keystring.PrefixEnd(lo)
	}
	hi := append(append([]byte(nil), prefix...), iv.hi...)
	if iv.hiInc {
		hi = keystring.PrefixEnd(hi)
	}
	if len(prefix) == 0 && isAllBytes(iv) {
		return true, nil, nil
	}
	return true, lo, hi
}

var (
	minKeyBytes = []byte{keystring.AppendValue(nil, minKey, false)[0]}
	maxKeyBytes = []byte{keystring.AppendValue(nil, maxKey, false)[0]}
)

func isAllBytes(iv byteInterval) bool {
	if !iv.loInc || !iv.hiInc {
		return false
	}
	asc := bytes.Equal(iv.lo, minKeyBytes) && bytes.Equal(iv.hi, maxKeyBytes)
	desc := bytes.Equal(iv.lo, []byte{^maxKeyBytes[0]}) && bytes.Equal(iv.hi, []byte{^minKeyBytes[0]})
	return asc || desc
}

func (s *ixScan) counters() *counters { return &s.counters_ }
func (s *ixScan) children() []stage   { return nil }
func (s *ixScan) name() string        { return "IXSCAN" }

func (s *ixScan) close() {
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
}

func (s *ixScan) open(lo, hi []byte) error {
	if s.it != nil {
		s.it.Close()
	}
	it, err := s.env.rd.IndexScan(s.env.coll, s.ix.st, lo, hi, s.dir < 0)
	if err != nil {
		return err
	}
	s.it = it
	return nil
}

func (s *ixScan) doWork(ctx context.Context) (state, *member, error) {
	switch s.st {
	case scanEnd:
		return isEOF, nil, nil
	case scanInit:
		s.seeks++
		if s.empty {
			s.st = scanEnd
			return isEOF, nil, nil
		}
		var err error
		if s.simple {
			err = s.open(s.lo, s.hi)
		} else if s.dir > 0 {
			err = s.open(s.startKey(nil, 0, 0), nil)
		} else {
			err = s.open(nil, s.endKey(nil, 0, len(s.fb[0])-1))
		}
		if err != nil {
			return 0, nil, err
		}
	case scanSeek:
		s.seeks++
		if err := s.open(s.seekLo, s.seekHi); err != nil {
			return 0, nil, err
		}
	}
	if s.keys%1024 == 1023 {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
	}
	if !s.it.Next() {
		err := s.it.Err()
		s.close()
		s.st = scanEnd
		return isEOF, nil, err
	}
	s.st = scanNext
	s.keys++
	key := s.it.Key()
	if !s.simple {
		switch s.check(key) {
		case checkDone:
			s.close()
			s.st = scanEnd
			return isEOF, nil, nil
		case checkSeek:
			s.st = scanSeek
			return needTime, nil, nil
		}
	}
	rid, err := s.it.RecordID()
	if err != nil {
		return 0, nil, err
	}
	if s.dedup {
		s.tested++
		if _, dup := s.seen[rid]; dup {
			s.dropped++
			return needTime, nil, nil
		}
	}
	m := &member{rid: rid, key: append([]byte(nil), key...), ix: s.ix}
	m.from, m.fromIx = m.key, s.ix
	if s.keyFilter != nil {
		doc, ok := s.ix.keyDoc(m.key)
		if !ok || !s.keyFilter.Match(doc) {
			return needTime, nil, nil
		}
	}
	if s.dedup {
		s.seen[rid] = struct{}{}
	}
	return advanced, m, nil
}

type checkResult int

const (
	checkValid checkResult = iota
	checkSeek
	checkDone
)

// check places key against the bounds field by field; on a gap it sets
// the seek target for the next work.
func (s *ixScan) check(key []byte) checkResult {
	off := 0
	for i := range s.fb {
		_, rest, err := keystring.DecodeValue(key[off:], s.ix.desc[i])
		if err != nil {
			return checkDone
		}
		end := len(key) - len(rest)
		v := key[off:end]
		pos, in := position(s.fb[i], v)
		if in {
			off = end
			continue
		}
		prefix := key[:off]
		if s.dir > 0 {
			if pos == len(s.fb[i]) {
				if i == 0 {
					return checkDone
				}
				s.seekLo, s.seekHi = keystring.PrefixEnd(prefix), nil
				return checkSeek
			}
			s.seekLo, s.seekHi = s.startKey(prefix, i, pos), nil
			return checkSeek
		}
		if pos == 0 {
			if i == 0 {
				return checkDone
			}
			s.seekLo, s.seekHi = nil, append([]byte(nil), prefix...)
			return checkSeek
		}
		s.seekLo, s.seekHi = nil, s.endKey(prefix, i, pos-1)
		return checkSeek
	}
	return checkValid
}

// startKey returns the smallest key at or after prefix + the start of
// interval at of field i, with each later field at its first interval.
func (s *ixScan) startKey(prefix []byte, i, at int) []byte {
	acc := append([]byte(nil), prefix...)
	for f := i; f < len(s.fb); f++ {
		iv := s.fb[f][0]
		if f == i {
			iv = s.fb[f][at]
		}
		acc = append(acc, iv.lo...)
		if !iv.loInc {
			return keystring.PrefixEnd(acc)
		}
	}
	return acc
}

// endKey returns the exclusive upper bound of a backward seek to prefix +
// the end of interval at of field i, later fields at their last interval.
func (s *ixScan) endKey(prefix []byte, i, at int) []byte {
	acc := append([]byte(nil), prefix...)
	for f := i; f < len(s.fb); f++ {
		iv := s.fb[f][len(s.fb[f])-1]
		if f == i {
			iv = s.fb[f][at]
		}
		acc = append(acc, iv.hi...)
		if !iv.hiInc {
			return acc
		}
	}
	return keystring.PrefixEnd(acc)
}

func (s *ixScan) describe(d bson.D, stats bool) bson.D {
	if s.keyFilterX != nil {
		d = append(d, bson.E{Key: "filter", Value: s.keyFilterX.serialize("")})
	}
	d = append(d,
		bson.E{Key: "keyPattern", Value: s.ix.keyPattern},
		bson.E{Key: "indexName", Value: s.ix.spec.Name},
	)
	if s.ix.spec.Collation != nil {
		d = append(d, bson.E{Key: "collation", Value: s.ix.spec.Collation})
	}
	d = append(d,
		bson.E{Key: "isMultiKey", Value: s.ix.multikey},
		bson.E{Key: "multiKeyPaths", Value: s.ix.multiKeyPaths()},
		bson.E{Key: "isUnique", Value: s.ix.st.Unique},
		bson.E{Key: "isSparse", Value: s.ix.spec.Sparse},
		bson.E{Key: "isPartial", Value: s.ix.spec.PartialFilterExpression != nil},
		bson.E{Key: "indexVersion", Value: int32(2)},
	)
	dir := "forward"
	if s.dir < 0 {
		dir = "backward"
	}
	d = append(d, bson.E{Key: "direction", Value: dir}, bson.E{Key: "indexBounds", Value: s.boundsDoc()})
	if stats {
		d = append(d,
			bson.E{Key: "keysExamined", Value: int32(s.keys)},
			bson.E{Key: "seeks", Value: int32(s.seeks)},
			bson.E{Key: "dupsTested", Value: int32(s.tested)},
			bson.E{Key: "dupsDropped", Value: int32(s.dropped)},
		)
	}
	return d
}

// boundsDoc renders the bounds in scan order, as mongod's
// IndexBounds::toBSON does.
func (s *ixScan) boundsDoc() bson.D {
	var d bson.D
	for i, o := range s.bounds {
		rev := s.ix.desc[i] != (s.dir < 0)
		arr := bson.A{}
		for j := range o {
			iv := o[j]
			if rev {
				iv = o[len(o)-1-j].reversed()
			}
			arr = append(arr, iv.format(s.ix.coll != nil))
		}
		d = append(d, bson.E{Key: s.ix.paths[i], Value: arr})
	}
	return d
}

// keyDoc rebuilds a document from an index key: {path: value, ...} with
// dotted paths nested. ok is false when the paths collide.
func (ix *indexInfo) keyDoc(key []byte) (bson.Raw, bool) {
	vals, _, err := keystring.Decode(key, ix.desc)
	if err != nil {
		return nil, false
	}
	return nestDoc(ix.paths, vals)
}

// nestDoc builds {p1: v1, ...} with dotted paths as nested documents.
func nestDoc(paths []string, vals []bson.RawValue) (bson.Raw, bool) {
	type nodeT struct {
		names []string
		kids  map[string]*nodeT
		val   *bson.RawValue
	}
	root := &nodeT{kids: map[string]*nodeT{}}
	for i, p := range paths {
		cur := root
		parts := strings.Split(p, ".")
		for j, part := range parts {
			if cur.val != nil {
				return nil, false
			}
			next := cur.kids[part]
			if next == nil {
				next = &nodeT{kids: map[string]*nodeT{}}
				cur.kids[part] = next
				cur.names = append(cur.names, part)
			}
			if j == len(parts)-1 {
				if next.val != nil || len(next.kids) > 0 {
					return nil, false
				}
				v := vals[i]
				next.val = &v
			}
			cur = next
		}
	}
	var build func(n *nodeT) []byte
	build = func(n *nodeT) []byte {
		idx, d := bsoncore.AppendDocumentStart(nil)
		for _, name := range n.names {
			k := n.kids[name]
			if k.val != nil {
				d = bsoncore.AppendValueElement(d, name, bsoncore.Value{Type: bsoncore.Type(k.val.Type), Data: k.val.Value})
			} else {
				d = bsoncore.AppendDocumentElement(d, name, build(k))
			}
		}
		d, _ = bsoncore.AppendDocumentEnd(d, idx)
		return d
	}
	return build(root), true
}

// coverer produces a covered plan's documents.
//
// Divergence: mongod answers a covered query from the index keys alone.
// Here the keystring encoding holds values, not types (keystring I8), and
// the index package does not flag one-element or empty arrays as
// multikey, so a key cannot tell 1 from 1.0, a missing field from null,
// or "x" from ["x"]. The coverer therefore reads the record to return
// exact values; the plan keeps mongod's covered shape and explain reports
// docsExamined 0 as mongod would.
type coverer struct{}

func (coverer) doc(e *env, m *member) (bson.Raw, error) {
	return e.rd.Fetch(e.coll, m.rid)
}
