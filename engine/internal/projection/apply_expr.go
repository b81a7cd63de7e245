package projection

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

// addComputed appends to dst out (the inclusion projection of the
// document) with the computed fields of n, as mongod's inclusion node
// applies its expressions after the projection: a field whose branch
// holds computed fields keeps its place and gets them inside it (in each
// document of an array; a scalar there becomes a document), and the
// other computed fields and new branches follow in spec order. A value
// that evaluates to missing adds no field.
func addComputed(dst, out []byte, n *pnode, c *expr.Ctx) ([]byte, error) {
	idx, dst := bsoncore.AppendDocumentStart(dst)
	present := map[string]bool{}
	var err error
	bsonkit.ForEach(out, func(key string, v bson.RawValue) bool {
		present[key] = true
		child := n.children[key]
		if child == nil || child.kind != kindBranch || !child.hasExpr {
			dst = appendValue(dst, key, v)
			return true
		}
		dst, err = computedValue(dst, key, v, child, c)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	for _, key := range n.order {
		if present[key] {
			continue
		}
		child := n.children[key]
		switch {
		case child.kind == kindExpr:
			v, err := child.expr.Eval(c)
			if err != nil {
				return nil, err
			}
			if v.Type != 0 {
				dst = appendValue(dst, key, v)
			}
		case child.kind == kindBranch && child.hasExpr:
			if dst, err = computedValue(dst, key, bson.RawValue{}, child, c); err != nil {
				return nil, err
			}
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst, nil
}

// computedValue appends key: v with the computed fields of branch n
// applied to it: into a document, into each element of an array, and to
// an empty document in place of anything else.
func computedValue(dst []byte, key string, v bson.RawValue, n *pnode, c *expr.Ctx) ([]byte, error) {
	switch v.Type {
	case bson.TypeArray:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
		idx, d := bsoncore.AppendArrayStart(dst)
		dst = d
		i := 0
		var err error
		bsonkit.ForEach(v.Value, func(_ string, e bson.RawValue) bool {
			dst, err = computedValue(dst, itoa(i), e, n, c)
			i++
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		dst, _ = bsoncore.AppendArrayEnd(dst, idx)
		return dst, nil
	case bson.TypeEmbeddedDocument:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
		return addComputed(dst, v.Value, n, c)
	}
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
	return addComputed(dst, emptyDoc, n, c)
}

// emptyDoc is the BSON document {}.
var emptyDoc = []byte{5, 0, 0, 0, 0}
