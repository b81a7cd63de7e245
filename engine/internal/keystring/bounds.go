package keystring

import "go.mongodb.org/mongo-driver/v2/bson"

// Successor returns the smallest byte string greater than key: key followed
// by 0x00. Use it to turn an inclusive bound on whole entries into an
// exclusive one. To include every entry whose key starts with an encoded
// value (a non-unique index entry is key + record ID), use PrefixEnd
// instead. The result is freshly allocated.
func Successor(key []byte) []byte {
	s := make([]byte, len(key)+1)
	copy(s, key)
	return s
}

// PrefixEnd returns the smallest byte string greater than every string that
// starts with prefix, or nil when there is none (prefix is empty or all
// 0xFF). [prefix, PrefixEnd(prefix)) is every entry whose key starts with
// prefix; since encodings are prefix-free (I1), for a prefix made of whole
// encoded fields these are exactly the entries with those leading values.
// The result is freshly allocated.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			end := make([]byte, i+1)
			copy(end, prefix)
			end[i]++
			return end
		}
	}
	return nil
}

// TypeRange returns the half-open range [lo, hi) of one-field encodings
// (direction desc) that holds every value of t's canonical type bracket and
// nothing else: all numbers for any numeric type, strings and symbols
// together, false and true for bool. Concatenate lo and hi after the
// encoded leading fields of a compound key to bound the next field by type.
// An unknown type returns an empty range at tagInvalid.
func TypeRange(t bson.Type, desc bool) (lo, hi []byte) {
	first := canonical(t)
	last := first
	switch first {
	case tagNaN:
		last = tagPosInf
	case tagFalse:
		last = tagTrue
	}
	if desc {
		return []byte{^last}, []byte{^first + 1}
	}
	return []byte{first}, []byte{last + 1}
}
