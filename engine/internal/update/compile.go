package update

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// compiler builds the update tree from the operator documents, in the
// order they appear, as mongod's parseUpdateExpression does.
type compiler struct {
	root    *objNode
	filters map[string]*arrayFilter
	used    map[string]bool
}

// operators lists the update operators mongod 7.0 knows.
var operators = map[string]bool{
	"$addToSet": true, "$bit": true, "$currentDate": true, "$inc": true, "$max": true,
	"$min": true, "$mul": true, "$pop": true, "$pull": true, "$pullAll": true,
	"$push": true, "$rename": true, "$set": true, "$setOnInsert": true, "$unset": true,
}

func (c *compiler) operator(name string, v bson.RawValue) error {
	if name == "$v" {
		return mongoerr.New(mongoerr.FailedToParse, "The $v update field is only recognized internally")
	}
	if !operators[name] {
		return mongoerr.Newf(mongoerr.FailedToParse,
			"Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", name)
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return mongoerr.Newf(mongoerr.FailedToParse,
			"Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s}",
			typeName(v.Type), fieldString(name, v))
	}
	elems, _ := doc.Elements()
	for _, el := range elems {
		if err := c.field(name, el.Key(), el.Value()); err != nil {
			return err
		}
	}
	return nil
}

// field adds one operator field to the tree.
func (c *compiler) field(op, path string, v bson.RawValue) error {
	if op == "$rename" {
		if err := c.add(path, func() (node, error) { return opPlaceholder{}, nil }); err != nil {
			return err
		}
		to, ok := v.StringValueOK()
		if !ok {
			return mongoerr.Newf(mongoerr.BadValue, "The 'to' field for $rename must be a string: %s", fieldString(path, v))
		}
		return c.add(to, func() (node, error) { return newRename(path, to) })
	}
	return c.add(path, func() (node, error) { return newLeaf(op, path, v) })
}

// add validates path and places the leaf built by mk at its end, creating
// internal nodes along the way. Conflicts with paths already in the tree
// are ConflictingUpdateOperators.
func (c *compiler) add(path string, mk func() (node, error)) error {
	if err := checkUpdatable(path); err != nil {
		return err
	}
	parts := splitPath(path)
	positionals, first := 0, -1
	for i, p := range parts {
		if isPositional(p) {
			positionals++
			if first < 0 {
				first = i
			}
		}
	}
	if positionals > 1 {
		return mongoerr.Newf(mongoerr.BadValue, "Too many positional (i.e. '$') elements found in path '%s'", path)
	}
	if first == 0 {
		return mongoerr.Newf(mongoerr.BadValue,
			"Cannot have positional (i.e. '$') element in the first position in path '%s'", path)
	}
	leaf, err := mk()
	if err != nil {
		return err
	}
	var cur node = c.root
	for i, p := range parts[:len(parts)-1] {
		name, err := c.childName(p, i, path)
		if err != nil {
			return err
		}
		wantArray := isArrayFilter(parts[i+1])
		child := getChild(cur, name)
		if child != nil {
			_, isArr := child.(*arrNode)
			_, isObj := child.(*objNode)
			if (wantArray && !isArr) || (!wantArray && !isObj) {
				return mongoerr.Newf(mongoerr.ConflictingUpdateOperators,
					"Updating the path '%s' would create a conflict at '%s'", path, joinPath(parts[:i+1]))
			}
		} else {
			if wantArray {
				child = newArrNode()
			} else {
				child = newObjNode()
			}
			setChild(cur, name, child)
		}
		cur = child
	}
	name, err := c.childName(parts[len(parts)-1], len(parts)-1, path)
	if err != nil {
		return err
	}
	if getChild(cur, name) != nil {
		return mongoerr.Newf(mongoerr.ConflictingUpdateOperators,
			"Updating the path '%s' would create a conflict at '%s'", path, path)
	}
	setChild(cur, name, leaf)
	return nil
}

// childName returns the key of a path part in its parent node: the
// identifier for $[<id>] ("" for $[]), the part itself otherwise.
func (c *compiler) childName(part string, pos int, path string) (string, error) {
	if !isArrayFilter(part) {
		return part, nil
	}
	if pos == 0 {
		return "", mongoerr.Newf(mongoerr.BadValue,
			"Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", path)
	}
	id := part[2 : len(part)-1]
	if id == "" {
		return "", nil
	}
	if _, ok := c.filters[id]; !ok {
		return "", mongoerr.Newf(mongoerr.BadValue, "No array filter found for identifier '%s' in path '%s'", id, path)
	}
	c.used[id] = true
	return id, nil
}

// newLeaf parses the operand of one operator field.
func newLeaf(op, field string, v bson.RawValue) (node, error) {
	var m modifier
	var err error
	switch op {
	case "$set":
		m = &opSet{val: v}
	case "$setOnInsert":
		return &leafNode{op: &opSet{val: v}, insertOnly: true}, nil
	case "$unset":
		m = opUnset{}
	case "$inc", "$mul":
		m, err = newArith(op, field, v)
	case "$min", "$max":
		m = &opCompare{max: op == "$max", val: v}
	case "$currentDate":
		m, err = newCurrentDate(v)
	case "$push":
		m, err = newPush(v)
	case "$addToSet":
		m, err = newAddToSet(v)
	case "$pop":
		m, err = newPop(field, v)
	case "$pull":
		m, err = newPull(v)
	case "$pullAll":
		m, err = newPullAll(v)
	case "$bit":
		m, err = newBit(v)
	}
	if err != nil {
		return nil, err
	}
	return &leafNode{op: m}, nil
}

// newRename checks a $rename pair; errors are BadValue.
func newRename(from, to string) (node, error) {
	if strings.IndexByte(to, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "The 'to' field for $rename cannot contain an embedded null byte")
	}
	pair := fieldString(from, bson.RawValue{Type: bson.TypeString, Value: stringBytes(to)})
	if from == to {
		return nil, mongoerr.Newf(mongoerr.BadValue, "The source and target field for $rename must differ: %s", pair)
	}
	fp, tp := splitPath(from), splitPath(to)
	if hasPrefixPath(tp, fp) || hasPrefixPath(fp, tp) {
		return nil, mongoerr.Newf(mongoerr.BadValue,
			"The source and target field for $rename must not be on the same path: %s", pair)
	}
	if dynamic(fp) {
		return nil, mongoerr.Newf(mongoerr.BadValue, "The source field for $rename may not be dynamic: %s", from)
	}
	if dynamic(tp) {
		return nil, mongoerr.Newf(mongoerr.BadValue, "The destination field for $rename may not be dynamic: %s", to)
	}
	return &renameNode{from: fp, fromPath: from, toPath: to}, nil
}

// dynamic reports whether a path holds $, $[] or $[<id>].
func dynamic(parts []string) bool {
	for _, p := range parts {
		if isPositional(p) || isArrayFilter(p) {
			return true
		}
	}
	return false
}

// stringBytes encodes s as a BSON string value.
func stringBytes(s string) []byte {
	n := len(s) + 1
	b := []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
	b = append(b, s...)
	return append(b, 0)
}
