package plan

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
)

// distinctScan walks an index returning one key per distinct prefix of
// its fields up to and including field fieldNo, the distinct key
// (DISTINCT_SCAN): after each key it seeks past every other key with the
// same prefix, as mongod's DistinctScan does. When fields before the key
// are not bounded to one point the same key value may come back once per
// prefix; the distinct command removes such repeats. It keeps no
// record-id set, so a multikey document comes back once per distinct
// value it holds.
type distinctScan struct {
	*ixScan
	fieldNo int
}

// newDistinctScan returns a forward DISTINCT_SCAN of ix within a's
// bounds that skips to the next value of field fieldNo.
func newDistinctScan(e *env, ix *indexInfo, a *assignment, fieldNo int) *distinctScan {
	s := newIXScan(e, ix, a, 1)
	s.dedup, s.seen = false, nil
	return &distinctScan{ixScan: s, fieldNo: fieldNo}
}

func (s *distinctScan) name() string { return "DISTINCT_SCAN" }

func (s *distinctScan) doWork(ctx context.Context) (state, *member, error) {
	st, m, err := s.ixScan.doWork(ctx)
	if err != nil || st != advanced {
		return st, m, err
	}
	rest := m.key
	for i := 0; i <= s.fieldNo; i++ {
		_, rest, err = keystring.DecodeValue(rest, s.ix.desc[i])
		if err != nil {
			return 0, nil, err
		}
	}
	next := keystring.PrefixEnd(m.key[:len(m.key)-len(rest)])
	s.close()
	s.seekLo, s.seekHi = next, nil
	if s.simple {
		s.seekHi = s.hi
	}
	s.st = scanSeek
	return advanced, m, nil
}

func (s *distinctScan) describe(d bson.D, stats bool) bson.D {
	d = s.ixScan.describe(d, false)
	if stats {
		d = append(d, bson.E{Key: "keysExamined", Value: int32(s.keys)})
	}
	return d
}

// countScan counts the keys of an index within one contiguous range
// without fetching (COUNT_SCAN): it returns one document-less member per
// key. The planner uses it only where each document has at most one key
// in the range (the index is not multikey) and the bounds are exact.
type countScan struct {
	*ixScan
}

func (s *countScan) name() string { return "COUNT_SCAN" }

func (s *countScan) describe(d bson.D, stats bool) bson.D {
	if stats {
		d = append(d, bson.E{Key: "keysExamined", Value: int32(s.keys)})
	}
	d = append(d,
		bson.E{Key: "keyPattern", Value: s.ix.keyPattern},
		bson.E{Key: "indexName", Value: s.ix.spec.Name},
		bson.E{Key: "isMultiKey", Value: s.ix.multikey},
		bson.E{Key: "multiKeyPaths", Value: s.ix.multiKeyPaths()},
		bson.E{Key: "isUnique", Value: s.ix.st.Unique},
		bson.E{Key: "isSparse", Value: s.ix.spec.Sparse},
		bson.E{Key: "isPartial", Value: s.ix.spec.PartialFilterExpression != nil},
		bson.E{Key: "indexVersion", Value: int32(2)},
	)
	start, end := s.endpoints()
	return append(d, bson.E{Key: "indexBounds", Value: bson.D{
		{Key: "startKey", Value: start.key},
		{Key: "startKeyInclusive", Value: start.inc},
		{Key: "endKey", Value: end.key},
		{Key: "endKeyInclusive", Value: end.inc},
	}})
}

// endpoint is one end of a COUNT_SCAN's range as explain prints it.
type endpoint struct {
	key bson.D
	inc bool
}

// endpoints returns the range's first and last keys in index order, named
// by the key pattern's fields, as mongod's CountScan reports them.
func (s *countScan) endpoints() (start, end endpoint) {
	start.inc, end.inc = true, true
	for i, o := range s.bounds {
		iv := allValues
		if len(o) > 0 {
			iv = o[0]
		}
		lo, hi, loInc, hiInc := iv.lo, iv.hi, iv.loInc, iv.hiInc
		if s.ix.desc[i] {
			lo, hi, loInc, hiInc = hi, lo, hiInc, loInc
		}
		start.key = append(start.key, bson.E{Key: s.ix.paths[i], Value: lo})
		end.key = append(end.key, bson.E{Key: s.ix.paths[i], Value: hi})
		if !loInc {
			start.inc = false
		}
		if !hiInc {
			end.inc = false
		}
	}
	return start, end
}
