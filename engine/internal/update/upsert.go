package update

import (
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Upsert builds the document an upsert inserts when filter matched
// nothing. The document is seeded from the equality predicates of filter
// (top-level and dotted paths, $eq, single-value $in and $all, inside $and
// and a one-clause $or; for a replacement only _id), the update is applied
// with insert semantics ($setOnInsert applies, the positional operator has
// no match), and _id is moved first or generated as a new ObjectID.
//
// Errors: NotSingleValueField when equalities overlap, ImmutableField when
// the update changes an _id taken from the filter, InvalidIdField for an
// _id mongod cannot store, Location17420 past 16 MiB, and every error Apply
// returns. Upsert is safe for concurrent use.
// Manual: https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-behavior
func (u *Update) Upsert(filter bson.Raw, now time.Time) (bson.Raw, error) {
	if err := validDeep(filter, 0); err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid filter: %v", err)
	}
	eqs, err := equalities(filter)
	if err != nil {
		return nil, err
	}
	if u.replacement != nil {
		if eqs, err = onlyID(eqs); err != nil {
			return nil, err
		}
	}
	root := &elem{}
	root.setEmpty(bson.TypeEmbeddedDocument)
	for _, eq := range eqs {
		if err := setAtPath(root, eq.path, eq.val); err != nil {
			return nil, err
		}
	}
	if u.replacement != nil {
		seed := bson.Raw(root.encode(nil))
		out, _, err := u.replace(seed, true, now)
		if err != nil {
			return nil, err
		}
		root = newRoot(out)
	} else {
		c := &applyCtx{root: root, insert: true, now: now, filters: u.filters, coll: u.coll}
		if _, err := u.root.apply(c, root); err != nil {
			return nil, err
		}
	}
	if root.child("_id") == nil {
		oid := newObjectID()
		root.insertChild(0, newValue("_id", bson.RawValue{Type: bson.TypeObjectID, Value: oid[:]}))
	}
	idFirst(root)
	if err := validateDocument(root, true); err != nil {
		return nil, err
	}
	out := bson.Raw(root.encode(nil))
	if len(out) > MaxDocumentSize {
		return nil, mongoerr.Newf(mongoerr.Code(17420), "Document to upsert is larger than %d", MaxDocumentSize)
	}
	return out, nil
}

// newObjectID generates the _id of upserted documents; tests replace it to
// get deterministic output.
var newObjectID = bson.NewObjectID

// equality is one path = value predicate of a filter.
type equality struct {
	path []string
	val  bson.RawValue
}

// equalities extracts the equality predicates of a filter in filter order,
// rejecting paths that are equal or prefixes of each other as mongod's
// extractEqualityMatches does.
func equalities(filter bson.Raw) ([]equality, error) {
	var out []equality
	add := func(path string, v bson.RawValue) error {
		parts := splitPath(path)
		for _, e := range out {
			short, long := e.path, parts
			if len(short) > len(long) {
				short, long = long, short
			}
			if !hasPrefixPath(long, short) {
				continue
			}
			if len(short) == len(long) {
				return mongoerr.Newf(mongoerr.NotSingleValueField,
					"cannot infer query fields to set, path '%s' is matched twice", path)
			}
			return mongoerr.Newf(mongoerr.NotSingleValueField,
				"cannot infer query fields to set, both paths '%s' and '%s' are matched", joinPath(long), joinPath(short))
		}
		out = append(out, equality{path: parts, val: v})
		return nil
	}
	var walk func(doc bson.Raw) error
	walk = func(doc bson.Raw) error {
		elems, _ := doc.Elements()
		for _, el := range elems {
			k, v := el.Key(), el.Value()
			switch {
			case k == "$and":
				for _, c := range arrayValues(v) {
					if d, ok := c.DocumentOK(); ok {
						if err := walk(d); err != nil {
							return err
						}
					}
				}
			case k == "$or":
				if cs := arrayValues(v); len(cs) == 1 {
					if d, ok := cs[0].DocumentOK(); ok {
						if err := walk(d); err != nil {
							return err
						}
					}
				}
			case strings.HasPrefix(k, "$"):
			default:
				if err := pathEqualities(k, v, add); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(filter); err != nil {
		return nil, err
	}
	return out, nil
}

// pathEqualities adds the equalities one path predicate implies.
func pathEqualities(path string, v bson.RawValue, add func(string, bson.RawValue) error) error {
	if v.Type == bson.TypeRegex {
		return nil
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return add(path, v)
	}
	elems, _ := doc.Elements()
	if len(elems) == 0 || !strings.HasPrefix(elems[0].Key(), "$") {
		return add(path, v)
	}
	for _, el := range elems {
		op, arg := el.Key(), el.Value()
		switch op {
		case "$eq":
			if err := add(path, arg); err != nil {
				return err
			}
		case "$in":
			if vals := arrayValues(arg); arg.Type == bson.TypeArray && len(vals) == 1 && vals[0].Type != bson.TypeRegex {
				if err := add(path, vals[0]); err != nil {
					return err
				}
			}
		case "$all":
			if arg.Type != bson.TypeArray {
				continue
			}
			for _, x := range arrayValues(arg) {
				if x.Type == bson.TypeRegex {
					continue
				}
				if d, ok := x.DocumentOK(); ok {
					if first, err := d.IndexErr(0); err == nil && first.Key() == "$elemMatch" {
						continue
					}
				}
				if err := add(path, x); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// onlyID keeps the equalities on _id, as mongod's extractFullEqualityMatches
// does for replacement upserts; a predicate on a part of _id is
// NotExactValueField.
func onlyID(eqs []equality) ([]equality, error) {
	var out []equality
	for _, e := range eqs {
		if e.path[0] != "_id" {
			continue
		}
		if len(e.path) > 1 {
			return nil, mongoerr.Newf(mongoerr.Code(111),
				"field at '_id' must be exactly specified, field at sub-path '%s'found", joinPath(e.path))
		}
		out = append(out, e)
	}
	return out, nil
}

// setAtPath sets v at path in the document root, creating documents along
// the way.
func setAtPath(root *elem, path []string, v bson.RawValue) error {
	cur := root
	i := 0
	for ; i < len(path); i++ {
		next := cur.lookup(path[i])
		if next == nil {
			break
		}
		cur = next
	}
	if i == len(path) {
		cur.set(v)
		return nil
	}
	_, err := createPathAt(path[i:], cur, newValue(path[len(path)-1], v))
	return err
}
