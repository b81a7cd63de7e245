package update

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// node is one node of a compiled update tree. Internal nodes (objNode,
// arrNode) follow the path; leaves apply one operator. A tree is immutable
// once Compile returns, so one tree serves any number of concurrent
// applications.
type node interface {
	// apply applies the node to e. When c.toCreate is not empty, e is the
	// deepest existing element and c.toCreate names the missing parts
	// below it. apply reports whether the document changed.
	apply(c *applyCtx, e *elem) (bool, error)
}

// objNode follows one level of field names (or array indexes spelled as
// field names). Its children apply in lessField order; the positional child
// ("$") applies last, merged with the child of the same name if there is
// one.
type objNode struct {
	kids       map[string]node
	order      []string
	positional node
}

// arrNode applies its children to the members of an array: the child keyed
// "" ($[]) to every member, a child keyed by an identifier ($[id]) to the
// members its array filter matches.
type arrNode struct {
	kids  map[string]node
	order []string
}

func newObjNode() *objNode { return &objNode{kids: map[string]node{}} }
func newArrNode() *arrNode { return &arrNode{kids: map[string]node{}} }

// getChild returns the child named name of an internal node.
func getChild(n node, name string) node {
	switch n := n.(type) {
	case *objNode:
		if isPositional(name) {
			return n.positional
		}
		return n.kids[name]
	case *arrNode:
		return n.kids[name]
	}
	return nil
}

// setChild adds a child to an internal node. The name is appended to the
// order: Compile sorts every order once when the tree is complete
// (sortTree), and mergeKids adds names already in order, so adding n
// children costs n log n rather than n².
func setChild(n node, name string, child node) {
	switch n := n.(type) {
	case *objNode:
		if isPositional(name) {
			n.positional = child
			return
		}
		n.kids[name] = child
		n.order = append(n.order, name)
	case *arrNode:
		n.kids[name] = child
		n.order = append(n.order, name)
	}
}

// compareField orders field names as lessField does.
func compareField(a, b string) int {
	switch {
	case lessField(a, b):
		return -1
	case lessField(b, a):
		return 1
	}
	return 0
}

// sortTree sorts the order of every internal node of the tree rooted at
// root, walking it with an explicit stack.
func sortTree(root node) {
	stack := []node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var kids map[string]node
		switch n := n.(type) {
		case *objNode:
			slices.SortFunc(n.order, compareField)
			kids = n.kids
			if n.positional != nil {
				stack = append(stack, n.positional)
			}
		case *arrNode:
			slices.SortFunc(n.order, compareField)
			kids = n.kids
		}
		for _, k := range kids {
			stack = append(stack, k)
		}
	}
}

// merge combines two nodes that apply to the same element, as mongod does
// when a positional child meets a child of the same name or when several
// array filters match one member. Two leaves (or a leaf and an internal
// node) conflict. path names the element, for the error message.
func merge(a, b node, path []string) (node, error) {
	switch a := a.(type) {
	case *objNode:
		if b, ok := b.(*objNode); ok {
			m := newObjNode()
			if err := mergeKids(m, a.kids, b.kids, path, false); err != nil {
				return nil, err
			}
			switch {
			case a.positional != nil && b.positional != nil:
				p, err := merge(a.positional, b.positional, append(slices.Clip(path), "$"))
				if err != nil {
					return nil, err
				}
				m.positional = p
			case a.positional != nil:
				m.positional = a.positional
			default:
				m.positional = b.positional
			}
			return m, nil
		}
	case *arrNode:
		if b, ok := b.(*arrNode); ok {
			m := newArrNode()
			if err := mergeKids(m, a.kids, b.kids, path, true); err != nil {
				return nil, err
			}
			return m, nil
		}
	}
	return nil, mongoerr.Newf(mongoerr.ConflictingUpdateOperators,
		"Update created a conflict at '%s'", joinPath(path))
}

func mergeKids(m node, left, right map[string]node, path []string, wrap bool) error {
	names := make([]string, 0, len(left)+len(right))
	for k := range left {
		names = append(names, k)
	}
	for k := range right {
		if _, ok := left[k]; !ok {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, compareField)
	for _, k := range names {
		l, r := left[k], right[k]
		switch {
		case l == nil:
			setChild(m, k, r)
		case r == nil:
			setChild(m, k, l)
		default:
			part := k
			if wrap {
				part = "$[" + k + "]"
			}
			c, err := merge(l, r, append(slices.Clip(path), part))
			if err != nil {
				return err
			}
			setChild(m, k, c)
		}
	}
	return nil
}

func (n *objNode) apply(c *applyCtx, e *elem) (bool, error) {
	positional := n.positional
	if positional != nil && c.matched == "" {
		return false, mongoerr.New(mongoerr.BadValue,
			"The positional operator did not find the match needed from the query.")
	}
	changed := false
	for _, name := range n.order {
		if err := c.tick(); err != nil {
			return false, err
		}
		child := n.kids[name]
		if positional != nil && name == c.matched {
			m, err := merge(child, positional, append(slices.Clip(c.taken), name))
			if err != nil {
				return false, err
			}
			child = m
			positional = nil
		}
		ch, err := c.applyChild(child, name, &e)
		if err != nil {
			return false, err
		}
		changed = changed || ch
	}
	if positional != nil {
		ch, err := c.applyChild(positional, c.matched, &e)
		if err != nil {
			return false, err
		}
		changed = changed || ch
	}
	return changed, nil
}

func (n *arrNode) apply(c *applyCtx, e *elem) (bool, error) {
	if len(c.toCreate) > 0 {
		p := joinPath(append(slices.Clip(c.taken), c.toCreate...))
		return false, mongoerr.Newf(mongoerr.BadValue,
			"The path '%s' must exist in the document in order to apply array updates.", p)
	}
	if e.typ != bson.TypeArray {
		return false, mongoerr.Newf(mongoerr.BadValue,
			"Cannot apply array updates to non-array element %s", elemString(e))
	}
	members := slices.Clone(e.children())
	matches := make([][]node, len(members))
	for i, m := range members {
		for _, id := range n.order {
			if id == "" {
				matches[i] = append(matches[i], n.kids[id])
				continue
			}
			f := c.filters[id]
			ok, err := f.matchValue(m.value(), c.coll)
			if err != nil {
				return false, err
			}
			if ok {
				matches[i] = append(matches[i], n.kids[id])
			}
		}
	}
	changed := false
	for i, m := range members {
		if err := c.tick(); err != nil {
			return false, err
		}
		if len(matches[i]) == 0 {
			continue
		}
		c.taken = append(c.taken, m.fieldName())
		child := matches[i][0]
		for _, other := range matches[i][1:] {
			merged, err := merge(child, other, c.taken)
			if err != nil {
				return false, err
			}
			child = merged
		}
		ch, err := child.apply(c, m)
		c.taken = c.taken[:len(c.taken)-1]
		if err != nil {
			return false, err
		}
		changed = changed || ch
	}
	return changed, nil
}

// applyChild applies child to the child of *e named field, creating the
// path when it is missing, and keeps c.taken, c.toCreate and *e in step
// the way mongod's UpdateObjectNode does: when the child created the
// missing path, *e advances onto it so later siblings find it.
func (c *applyCtx) applyChild(child node, field string, e **elem) (bool, error) {
	before := len(c.taken)
	var target *elem
	if len(c.toCreate) == 0 {
		target = (*e).lookup(field)
	}
	if target != nil {
		c.taken = append(c.taken, field)
	} else {
		target = *e
		c.toCreate = append(c.toCreate, field)
	}
	changed, err := child.apply(c, target)
	if err != nil {
		return false, err
	}
	if len(c.toCreate) > 0 {
		c.toCreate = c.toCreate[:len(c.toCreate)-1]
	} else {
		c.taken = c.taken[:len(c.taken)-1]
	}
	switch {
	case len(c.taken) > before:
		cur := *e
		for _, p := range c.taken[before:] {
			if cur = cur.lookup(p); cur == nil {
				return false, errLostPath(c.taken)
			}
		}
		*e = cur
	case len(c.toCreate) > 0:
		if next := (*e).lookup(c.toCreate[0]); next != nil {
			cur := next
			for _, p := range c.toCreate[1:] {
				if cur = cur.lookup(p); cur == nil {
					return false, errLostPath(append(slices.Clip(c.taken), c.toCreate...))
				}
			}
			c.taken = append(c.taken, c.toCreate...)
			*e = cur
			c.toCreate = c.toCreate[:0]
		}
	}
	return changed, nil
}

// errLostPath reports a path that an update created but cannot find again
// (possible only with duplicate field names); mongod treats this as an
// invariant, the engine as an internal error.
func errLostPath(path []string) error {
	return mongoerr.Newf(mongoerr.InternalError, "update lost track of the path '%s'", joinPath(path))
}
