package projection

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// errPositionalNoMatch is mongod's code when the query recorded no array
// position for a positional projection; errPositionalMismatch when the
// projected array has no element at that position. mongod's find prefixes
// both messages with "Executor error during find command :: caused by :: ".
const (
	errPositionalNoMatch  mongoerr.Code = 51246
	errPositionalMismatch mongoerr.Code = 51247
)

// Apply returns the projection of doc. f is the query filter, needed only
// for a positional projection (51050 when it is nil); the document must
// match it. A positional projection returns 51246 when the query recorded
// no array position and the projected path reaches an array, and 51247 when
// that array has no element at the recorded position.
func (p *Projection) Apply(doc bson.Raw, f *match.Filter) (bson.Raw, error) {
	var out []byte
	if p.inclusion {
		out = includeDoc(nil, doc, p.root)
		if p.env != nil {
			c := p.env.ctx()
			c.SetRoot(doc)
			var err error
			if out, err = addComputed(nil, out, p.root, c); err != nil {
				return nil, err
			}
		}
	} else {
		out = excludeDoc(nil, doc, p.root)
	}
	if len(p.elemMatch) > 0 {
		out = p.appendElemMatch(out, doc)
	}
	if p.positional != nil {
		if f == nil {
			return nil, mongoerr.New(mongoerr.Code(51050), "Projections with a positional operator require a matcher")
		}
		_, pos := f.MatchPos(doc)
		var err error
		out, err = applyPositional(out, p.positional, pos)
		if err != nil {
			return nil, err
		}
	}
	return bson.Raw(out), nil
}

func appendValue(dst []byte, key string, v bson.RawValue) []byte {
	return bsoncore.AppendValueElement(dst, key, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
}

// includeDoc appends to dst the inclusion projection of doc under n.
func includeDoc(dst []byte, doc []byte, n *pnode) []byte {
	idx, dst := bsoncore.AppendDocumentStart(dst)
	bsonkit.ForEach(doc, func(key string, v bson.RawValue) bool {
		child := n.children[key]
		if child == nil {
			return true
		}
		switch child.kind {
		case kindInclude, kindPositional:
			dst = appendValue(dst, key, v)
		case kindSlice:
			dst = appendSliced(dst, key, v, child)
		case kindBranch:
			switch v.Type {
			case bson.TypeEmbeddedDocument:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
				dst = includeDoc(dst, v.Value, child)
			case bson.TypeArray:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
				dst = includeArray(dst, v.Value, child)
			}
		}
		return true
	})
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// includeArray projects each document of an array (recursively through
// nested arrays) and drops scalars.
func includeArray(dst []byte, arr []byte, n *pnode) []byte {
	idx, dst := bsoncore.AppendArrayStart(dst)
	i := 0
	bsonkit.ForEach(arr, func(_ string, v bson.RawValue) bool {
		key := itoa(i)
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
			dst = includeDoc(dst, v.Value, n)
			i++
		case bson.TypeArray:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
			dst = includeArray(dst, v.Value, n)
			i++
		}
		return true
	})
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return dst
}

// excludeDoc appends to dst doc without the excluded paths of n.
func excludeDoc(dst []byte, doc []byte, n *pnode) []byte {
	idx, dst := bsoncore.AppendDocumentStart(dst)
	bsonkit.ForEach(doc, func(key string, v bson.RawValue) bool {
		child := n.children[key]
		if child == nil {
			dst = appendValue(dst, key, v)
			return true
		}
		switch child.kind {
		case kindExclude, kindElemMatch:
		case kindSlice:
			dst = appendSliced(dst, key, v, child)
		case kindBranch:
			switch v.Type {
			case bson.TypeEmbeddedDocument:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
				dst = excludeDoc(dst, v.Value, child)
			case bson.TypeArray:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
				dst = excludeArray(dst, v.Value, child)
			default:
				dst = appendValue(dst, key, v)
			}
		default:
			dst = appendValue(dst, key, v)
		}
		return true
	})
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

func excludeArray(dst []byte, arr []byte, n *pnode) []byte {
	idx, dst := bsoncore.AppendArrayStart(dst)
	i := 0
	bsonkit.ForEach(arr, func(_ string, v bson.RawValue) bool {
		key := itoa(i)
		i++
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
			dst = excludeDoc(dst, v.Value, n)
		case bson.TypeArray:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
			dst = excludeArray(dst, v.Value, n)
		default:
			dst = appendValue(dst, key, v)
		}
		return true
	})
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return dst
}

// appendSliced appends v under key with the $slice of n applied when v is
// an array; other values are kept as they are.
func appendSliced(dst []byte, key string, v bson.RawValue, n *pnode) []byte {
	if v.Type != bson.TypeArray {
		return appendValue(dst, key, v)
	}
	vals := bsonkit.Values(v.Value)
	start, end := sliceBounds(len(vals), n)
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
	idx, dst := bsoncore.AppendArrayStart(dst)
	for i, e := range vals[start:end] {
		dst = appendValue(dst, itoa(i), e)
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return dst
}

// sliceBounds computes [start, end) of find's $slice over an array of
// length l.
func sliceBounds(l int, n *pnode) (int, int) {
	if !n.hasSkip {
		if n.limit >= 0 {
			return 0, min(n.limit, l)
		}
		return max(l+n.limit, 0), l
	}
	start := n.skip
	if start < 0 {
		start = max(l+start, 0)
	}
	start = min(start, l)
	return start, min(start+n.limit, l)
}

// appendElemMatch rebuilds out with each $elemMatch field appended: the
// first matching element, in a one-element array; nothing when none
// matches.
func (p *Projection) appendElemMatch(out []byte, doc bson.Raw) []byte {
	body := out[:len(out)-1]
	res := append([]byte(nil), body...)
	for _, name := range p.elemMatch {
		n := p.root.children[name]
		ok, pos := n.filter.MatchPos(doc)
		if !ok || pos < 0 {
			continue
		}
		arr, found := bsonkit.Field(doc, name)
		if !found || arr.Type != bson.TypeArray {
			continue
		}
		el, found := bsonkit.Field(arr.Value, itoa(pos))
		if !found {
			continue
		}
		res = bsoncore.AppendHeader(res, bsoncore.TypeArray, name)
		idx, r := bsoncore.AppendArrayStart(res)
		r = appendValue(r, "0", el)
		res, _ = bsoncore.AppendArrayEnd(r, idx)
	}
	res = append(res, 0)
	setLength(res)
	return res
}

func setLength(doc []byte) {
	n := uint32(len(doc))
	doc[0], doc[1], doc[2], doc[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
}

// applyPositional replaces the first array along path in doc with a
// one-element array holding its element pos. Documents whose path reaches
// no array are left as they are.
func applyPositional(doc []byte, path []string, pos int) ([]byte, error) {
	out, _, err := positionalDoc(doc, path, pos)
	return out, err
}

// positionalDoc rewrites doc along path; done reports whether an array was
// found and trimmed.
func positionalDoc(doc []byte, path []string, pos int) ([]byte, bool, error) {
	idx, dst := bsoncore.AppendDocumentStart(nil)
	done := false
	var err error
	bsonkit.ForEach(doc, func(key string, v bson.RawValue) bool {
		if key != path[0] || done {
			dst = appendValue(dst, key, v)
			return true
		}
		switch {
		case v.Type == bson.TypeArray:
			if pos < 0 {
				err = mongoerr.New(errPositionalNoMatch, "positional operator '.$' couldn't find a matching element in the array")
				return false
			}
			el, ok := bsonkit.Field(v.Value, itoa(pos))
			if !ok {
				err = mongoerr.New(errPositionalMismatch, "positional operator '.$' element mismatch")
				return false
			}
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
			aidx, d := bsoncore.AppendArrayStart(dst)
			d = appendValue(d, "0", el)
			dst, _ = bsoncore.AppendArrayEnd(d, aidx)
			done = true
		case v.Type == bson.TypeEmbeddedDocument && len(path) > 1:
			var sub []byte
			sub, done, err = positionalDoc(v.Value, path[1:], pos)
			if err != nil {
				return false
			}
			dst = bsoncore.AppendDocumentElement(dst, key, sub)
		default:
			dst = appendValue(dst, key, v)
		}
		return true
	})
	if err != nil {
		return nil, false, err
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst, done, nil
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
