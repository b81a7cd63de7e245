package update

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// elem is one node of a mutable document: a field of a document, a member
// of an array, or the root document. Containers are expanded lazily: until
// a child is needed, raw holds the container's bytes and kids is nil, so an
// update copies untouched subtrees byte for byte.
//
// An elem tree belongs to one Apply call and is never shared between
// goroutines.
type elem struct {
	name     string // field name; ignored for array members (see fieldName)
	parent   *elem
	typ      bson.Type
	raw      []byte // value bytes; stale once a container is expanded
	kids     []*elem
	expanded bool
	// byName indexes a document's children by name once it has more than
	// indexMin of them, so that looking fields up while applying many
	// fields stays linear overall. It is nil while absent and when the
	// document holds duplicate names (then lookups scan, as before).
	byName map[string]*elem
	// noIndex records that duplicate names were found.
	noIndex bool
	// dead counts children removed but not yet dropped from kids: remove
	// marks instead of shifting kids, and live drops them in one pass
	// before kids is next read in order.
	dead    int
	removed bool
}

// indexMin is the number of children from which a document gets byName.
const indexMin = 16

// newRoot returns the root elem of doc. doc must be valid BSON; its bytes
// are referenced, not copied, and are never written to.
func newRoot(doc []byte) *elem {
	return &elem{typ: bson.TypeEmbeddedDocument, raw: doc}
}

// newValue returns a detached elem holding v.
func newValue(name string, v bson.RawValue) *elem {
	return &elem{name: name, typ: v.Type, raw: v.Value}
}

func (e *elem) isContainer() bool {
	return e.typ == bson.TypeEmbeddedDocument || e.typ == bson.TypeArray
}

// expand parses the children of a container elem once.
func (e *elem) expand() {
	if e.expanded || !e.isContainer() {
		return
	}
	e.expanded = true
	e.kids = nil
	rest := e.raw
	if len(rest) < 5 {
		return
	}
	rest = rest[4 : len(rest)-1]
	for len(rest) > 0 {
		el, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return
		}
		v := el.Value()
		e.kids = append(e.kids, &elem{name: el.Key(), parent: e, typ: bson.Type(v.Type), raw: v.Data})
		rest = r
	}
	e.raw = nil
}

// children returns the children of a container (nil for scalars).
func (e *elem) children() []*elem {
	e.expand()
	e.live()
	return e.kids
}

// live drops removed children from kids.
func (e *elem) live() {
	if e.dead == 0 {
		return
	}
	keep := e.kids[:0]
	for _, k := range e.kids {
		if !k.removed {
			keep = append(keep, k)
		}
	}
	clear(e.kids[len(keep):])
	e.kids = keep
	e.dead = 0
}

// child returns the first child named name of a document elem, or nil.
func (e *elem) child(name string) *elem {
	if e.typ != bson.TypeEmbeddedDocument {
		return nil
	}
	e.expand()
	if e.byName == nil && !e.noIndex && len(e.kids) > indexMin {
		e.buildIndex()
	}
	if e.byName != nil {
		return e.byName[name]
	}
	for _, k := range e.kids {
		if k.name == name && !k.removed {
			return k
		}
	}
	return nil
}

// buildIndex fills byName, or sets noIndex when names repeat.
func (e *elem) buildIndex() {
	m := make(map[string]*elem, len(e.kids))
	for _, k := range e.kids {
		if k.removed {
			continue
		}
		if _, dup := m[k.name]; dup {
			e.noIndex = true
			return
		}
		m[k.name] = k
	}
	e.byName = m
}

// indexChild records a child added to a document in byName.
func (e *elem) indexChild(k *elem) {
	if e.byName == nil {
		return
	}
	if _, dup := e.byName[k.name]; dup {
		e.byName, e.noIndex = nil, true
		return
	}
	e.byName[k.name] = k
}

// resetIndex forgets byName and removed children after kids was replaced.
func (e *elem) resetIndex() {
	e.byName, e.noIndex, e.dead = nil, false, 0
}

// nth returns the n-th member of an array elem, or nil.
func (e *elem) nth(n int) *elem {
	if e.typ != bson.TypeArray {
		return nil
	}
	kids := e.children()
	if n < 0 || n >= len(kids) {
		return nil
	}
	return kids[n]
}

// lookup returns the child of e addressed by one path part: a field of a
// document or, for an array, a member whose index the part spells.
func (e *elem) lookup(part string) *elem {
	switch e.typ {
	case bson.TypeEmbeddedDocument:
		return e.child(part)
	case bson.TypeArray:
		if i, ok := arrayIndex(part); ok {
			return e.nth(i)
		}
	}
	return nil
}

// indexOf returns the position of k among e's children, or -1.
func (e *elem) indexOf(k *elem) int {
	e.live()
	for i, c := range e.kids {
		if c == k {
			return i
		}
	}
	return -1
}

// fieldName returns the name mongod shows for e: its field name, or its
// index inside an array.
func (e *elem) fieldName() string {
	if e.parent != nil && e.parent.typ == bson.TypeArray {
		return strconv.Itoa(e.parent.indexOf(e))
	}
	return e.name
}

// value returns e's value, encoding an expanded container.
func (e *elem) value() bson.RawValue {
	if e.expanded {
		return bson.RawValue{Type: e.typ, Value: e.encode(nil)}
	}
	return bson.RawValue{Type: e.typ, Value: e.raw}
}

// encode appends e's value bytes to dst.
func (e *elem) encode(dst []byte) []byte {
	if !e.expanded {
		return append(dst, e.raw...)
	}
	e.live()
	idx, dst := bsoncore.ReserveLength(dst)
	for i, k := range e.kids {
		name := k.name
		if e.typ == bson.TypeArray {
			name = strconv.Itoa(i)
		}
		dst = append(dst, byte(k.typ))
		dst = append(dst, name...)
		dst = append(dst, 0)
		dst = k.encode(dst)
	}
	dst = append(dst, 0)
	return bsoncore.UpdateLength(dst, idx, int32(len(dst[idx:])))
}

// set replaces e's value with v. v's bytes are referenced, not copied.
func (e *elem) set(v bson.RawValue) {
	e.typ = v.Type
	e.raw = v.Value
	e.kids = nil
	e.expanded = false
	e.resetIndex()
}

// setEmpty makes e an empty document or array.
func (e *elem) setEmpty(t bson.Type) {
	e.typ = t
	e.raw = nil
	e.kids = nil
	e.expanded = true
	e.resetIndex()
}

// appendChild adds k as the last child of container e.
func (e *elem) appendChild(k *elem) {
	e.expand()
	k.parent = e
	k.removed = false
	e.kids = append(e.kids, k)
	e.indexChild(k)
}

// insertChild inserts k at position i of container e.
func (e *elem) insertChild(i int, k *elem) {
	e.expand()
	e.live()
	k.parent = e
	k.removed = false
	e.kids = append(e.kids, nil)
	copy(e.kids[i+1:], e.kids[i:])
	e.kids[i] = k
	e.indexChild(k)
}

// remove detaches e from its parent. It only marks e: the parent drops
// its removed children in one pass when next read in order (live), so
// removing many fields costs linear time.
func (e *elem) remove() {
	p := e.parent
	if p == nil || e.removed {
		return
	}
	e.removed = true
	e.parent = nil
	p.dead++
	if p.byName != nil && p.byName[e.name] == e {
		delete(p.byName, e.name)
	}
}

// pathOf returns the dotted path from the root to e, as mongod's
// getFullName reports it.
func (e *elem) pathOf() string {
	if e.parent == nil {
		return ""
	}
	if e.parent.parent == nil {
		return e.fieldName()
	}
	return e.parent.pathOf() + "." + e.fieldName()
}
