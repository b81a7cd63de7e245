package match

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// pathlessOps are the operators mongod parses without a path; an
// $elemMatch whose first operator is one of them is a document condition.
var pathlessOps = map[string]bool{
	"$and": true, "$or": true, "$nor": true, "$comment": true,
	"$alwaysTrue": true, "$alwaysFalse": true, "$expr": true, "$where": true,
	"$text": true, "$jsonSchema": true, "$sampleRate": true,
}

// pathOps are the operators mongod accepts in an operator document. $all
// refuses values that are operator documents of these.
var pathOps = map[string]bool{
	"$eq": true, "$ne": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true,
	"$in": true, "$nin": true, "$exists": true, "$type": true, "$size": true,
	"$mod": true, "$regex": true, "$options": true, "$elemMatch": true, "$all": true,
	"$not": true, "$bitsAllSet": true, "$bitsAllClear": true, "$bitsAnySet": true,
	"$bitsAnyClear": true, "$near": true, "$nearSphere": true, "$geoNear": true,
	"$geoWithin": true, "$within": true, "$geoIntersects": true,
}

func firstKey(doc []byte) string {
	k := ""
	bsonkit.ForEach(doc, func(key string, _ bson.RawValue) bool {
		k = key
		return false
	})
	return k
}

// parseElemMatch compiles $elemMatch. An operand whose first field is a
// field operator ({$gt: 1, $lt: 5}) tests each element as a value; any
// other document ({x: 1}, {$or: ...}) tests elements that are documents or
// arrays as documents.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/elemMatch/
func (c *compiler) parseElemMatch(name string, v bson.RawValue) (node, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, badValue("$elemMatch needs an Object")
	}
	c.addPath(name)
	c.depth++
	defer func() { c.depth-- }()
	if isOperatorDoc(v, true) && !pathlessOps[firstKey(v.Value)] {
		children, err := c.parseSub("", v.Value)
		if err != nil {
			return nil, err
		}
		cond := &andNode{children: children}
		em := newArrayLeaf(name, KindElemMatchValue, "$elemMatch", v, func(arr []byte) (bool, int) {
			found, pos, i := false, -1, 0
			bsonkit.ForEach(arr, func(_ string, e bson.RawValue) bool {
				if cond.matchValue(e) {
					found, pos = true, i
					return false
				}
				i++
				return true
			})
			return found, pos
		})
		em.sub = cond
		return em, nil
	}
	sub, err := c.parse(v.Value, levelSubDoc)
	if err != nil {
		return nil, err
	}
	em := newArrayLeaf(name, KindElemMatchObject, "$elemMatch", v, func(arr []byte) (bool, int) {
		found, pos, i := false, -1, 0
		bsonkit.ForEach(arr, func(_ string, e bson.RawValue) bool {
			if bsonkit.IsContainer(e) {
				if ok, _ := sub.match(e.Value, nil); ok {
					found, pos = true, i
					return false
				}
			}
			i++
			return true
		})
		return found, pos
	})
	em.sub = sub
	return em, nil
}

// parseAll compiles $all: an $and of equalities (or regexes), or of
// $elemMatch conditions when the first element is one. An empty $all
// matches nothing.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/all/
func (c *compiler) parseAll(name string, v bson.RawValue) (node, error) {
	if v.Type != bson.TypeArray {
		return nil, badValue("$all needs an array")
	}
	vals := bsonkit.Values(v.Value)
	if len(vals) == 0 {
		return &constNode{value: false}, nil
	}
	var children []node
	if vals[0].Type == bson.TypeEmbeddedDocument && firstKey(vals[0].Value) == "$elemMatch" {
		for _, e := range vals {
			if e.Type != bson.TypeEmbeddedDocument || firstKey(e.Value) != "$elemMatch" {
				return nil, badValue("$all/$elemMatch has to be consistent")
			}
			em, _ := bsonkit.Field(e.Value, "$elemMatch")
			n, err := c.parseElemMatch(name, em)
			if err != nil {
				return nil, err
			}
			children = append(children, n)
		}
		return &andNode{children: children}, nil
	}
	for _, e := range vals {
		var n node
		var err error
		switch {
		case e.Type == bson.TypeRegex:
			n, err = newRegexLeaf(name, e)
		case e.Type == bson.TypeEmbeddedDocument && pathOps[firstKey(e.Value)]:
			err = badValue("no $ expressions in $all")
		default:
			n, err = c.newCompare(name, opEQ, e)
		}
		if err != nil {
			return nil, err
		}
		children = append(children, n)
	}
	return &andNode{children: children}, nil
}

// newSize compiles $size. Like mongod, it takes int32, int64 and double
// operands only; a decimal128 "needs a number".
// https://www.mongodb.com/docs/v7.0/reference/operator/query/size/
func newSize(name string, v bson.RawValue) (node, error) {
	var size int64
	switch v.Type {
	case bson.TypeInt32:
		size = int64(v.Int32())
	case bson.TypeInt64:
		size = v.Int64()
		if size < math.MinInt32 || size > math.MaxInt32 {
			return nil, badValue("$size must be representable as a 32-bit integer")
		}
	case bson.TypeDouble:
		n, ok := bsonkit.ExactInt64(v)
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, badValue("$size must be a whole number")
		}
		size = n
	default:
		return nil, badValue("$size needs a number")
	}
	if size < 0 {
		return nil, badValue("$size may not be negative")
	}
	n := int(size)
	return newArrayLeaf(name, KindSize, "$size", v, func(arr []byte) (bool, int) {
		return bsonkit.Len(arr) == n, -1
	}), nil
}
