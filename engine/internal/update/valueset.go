package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
)

// valueSet holds values under MongoDB's equality (compareValues == 0) with
// hashed lookups: values MongoDB compares equal have equal keystring
// encodings (1, 1.0, NumberLong(1) alike; field order in documents
// significant), so the encoding buckets a value and compareValues confirms
// it within the bucket. $addToSet and $pullAll use it instead of scanning
// every value for every value.
type valueSet struct {
	buckets map[string][]bson.RawValue
	buf     []byte
}

// newValueSet returns an empty set sized for n values.
func newValueSet(n int) *valueSet {
	return &valueSet{buckets: make(map[string][]bson.RawValue, n)}
}

// key returns v's bucket key; it is valid until the next call.
func (s *valueSet) key(v bson.RawValue) []byte {
	s.buf = keystring.AppendValue(s.buf[:0], v, false)
	return s.buf
}

// contains reports whether the set holds a value equal to v. It does not
// write to the set, so concurrent calls are safe once it is filled.
func (s *valueSet) contains(v bson.RawValue) bool {
	var buf [64]byte
	k := keystring.AppendValue(buf[:0], v, false)
	for _, x := range s.buckets[string(k)] {
		if compareValues(x, v) == 0 {
			return true
		}
	}
	return false
}

// add adds v unless the set holds an equal value, and reports whether it
// did.
func (s *valueSet) add(v bson.RawValue) bool {
	k := s.key(v)
	bucket := s.buckets[string(k)]
	for _, x := range bucket {
		if compareValues(x, v) == 0 {
			return false
		}
	}
	s.buckets[string(k)] = append(bucket, v)
	return true
}
