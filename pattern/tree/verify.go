package tree

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// MaxCheckNodes bounds the nodes Check loads; a larger tree gives an
// error rather than unbounded memory.
const MaxCheckNodes = 2_000_000

// maxDetails bounds the lines of a Check result.
const maxDetails = 200

// stored is one node as Check reads it.
type stored struct {
	id, parent bson.RawValue
	children   []bson.RawValue
	ancestors  []bson.RawValue
	path       bson.RawValue
}

// Check compares every kept representation with the parent references,
// which are the truth: each node's Children must hold exactly the nodes
// naming it as parent (in any order), its Ancestors the chain of parents
// root first, its Path that chain joined. A parent reference to a node
// that does not exist, or a chain of parents that loops, is a problem
// Repair cannot fix (it names the nodes; fix the parent, or Delete).
// With repair, every other node that differs gets the expected fields,
// in unordered bulk writes. Check loads the _ids and tree fields of
// every node (at most MaxCheckNodes) and writes only when repairing;
// changes made while it runs may be reported.
func (t *Tree[T]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	res := pattern.Result{Name: t.Name()}
	nodes, err := t.load(ctx)
	if err != nil {
		return res, fmt.Errorf("tree: check: %w", err)
	}
	res.Checked = len(nodes)
	byID := make(map[string]*stored, len(nodes))
	kids := map[string][]bson.RawValue{}
	for i := range nodes {
		byID[key(nodes[i].id)] = &nodes[i]
	}
	for _, n := range nodes {
		if !isNull(n.parent) {
			kids[key(n.parent)] = append(kids[key(n.parent)], n.id)
		}
	}
	note := func(format string, args ...any) {
		res.Problems++
		if len(res.Details) < maxDetails {
			res.Details = append(res.Details, fmt.Sprintf(format, args...))
		}
	}
	var fixes []mongo.WriteModel
	for _, n := range nodes {
		chain, why := t.chain(n, byID, len(nodes))
		if why != "" {
			note("node %v: %s", n.id, why)
			continue
		}
		var set bson.D
		var diffs []string
		if t.cfg.Children != "" {
			want := kids[key(n.id)]
			if !sameSet(n.children, want) {
				diffs = append(diffs, fmt.Sprintf("%s %v want %v", t.cfg.Children, n.children, want))
				set = append(set, bson.E{Key: t.cfg.Children, Value: toA(want)})
			}
		}
		if t.cfg.Ancestors != "" && !sameList(n.ancestors, chain) {
			diffs = append(diffs, fmt.Sprintf("%s %v want %v", t.cfg.Ancestors, n.ancestors, chain))
			set = append(set, bson.E{Key: t.cfg.Ancestors, Value: toA(chain)})
		}
		if t.cfg.Path != "" {
			want, ok := t.pathOf(chain)
			got, _ := n.path.StringValueOK()
			switch {
			case !ok:
				note("node %v: an ancestor's _id cannot be in a path", n.id)
			case n.path.Type != bson.TypeString || got != want:
				diffs = append(diffs, fmt.Sprintf("%s %v want %q", t.cfg.Path, n.path, want))
				set = append(set, bson.E{Key: t.cfg.Path, Value: want})
			}
		}
		if len(diffs) > 0 {
			note("node %v: %s", n.id, strings.Join(diffs, "; "))
			fixes = append(fixes, mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: n.id}}).
				SetUpdate(bson.D{{Key: "$set", Value: set}}))
		}
	}
	if repair && len(fixes) > 0 {
		for len(fixes) > 0 {
			k := min(len(fixes), 1000)
			r, err := t.coll.BulkWrite(ctx, fixes[:k], options.BulkWrite().SetOrdered(false))
			if err != nil {
				return res, fmt.Errorf("tree: repair: %w", err)
			}
			res.Repaired += int(r.MatchedCount)
			fixes = fixes[k:]
		}
	}
	return res, nil
}

// chain returns n's ancestors, root first, following parent references;
// why says what is wrong when the chain is broken or loops.
func (t *Tree[T]) chain(n stored, byID map[string]*stored, limit int) ([]bson.RawValue, string) {
	var up []bson.RawValue
	cur := n
	for !isNull(cur.parent) {
		p, ok := byID[key(cur.parent)]
		if !ok {
			return nil, fmt.Sprintf("ancestor %v names parent %v, which does not exist", cur.id, cur.parent)
		}
		if key(p.id) == key(n.id) || len(up) > limit {
			return nil, "its parent references loop"
		}
		up = append(up, p.id)
		cur = *p
	}
	slices.Reverse(up)
	return up, ""
}

// pathOf joins a chain into a path; ok is false when an _id is not a
// string free of the separator.
func (t *Tree[T]) pathOf(chain []bson.RawValue) (string, bool) {
	var b strings.Builder
	b.WriteString(t.cfg.Separator)
	for _, a := range chain {
		s, ok := a.StringValueOK()
		if !ok || s == "" || strings.Contains(s, t.cfg.Separator) {
			return "", false
		}
		b.WriteString(s)
		b.WriteString(t.cfg.Separator)
	}
	return b.String(), true
}

// load reads the tree fields of every node.
func (t *Tree[T]) load(ctx context.Context) ([]stored, error) {
	proj := bson.D{{Key: t.cfg.Parent, Value: 1}}
	for _, f := range []string{t.cfg.Children, t.cfg.Ancestors, t.cfg.Path} {
		if f != "" {
			proj = append(proj, bson.E{Key: f, Value: 1})
		}
	}
	cur, err := t.coll.Find(ctx, bson.D{}, options.Find().SetProjection(proj))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var out []stored
	for cur.Next(ctx) {
		if len(out) == MaxCheckNodes {
			return nil, fmt.Errorf("more than %d nodes", MaxCheckNodes)
		}
		d := bson.Raw(append([]byte(nil), cur.Current...))
		s := stored{id: d.Lookup("_id"), parent: d.Lookup(t.cfg.Parent)}
		if t.cfg.Children != "" {
			s.children = values(d.Lookup(t.cfg.Children))
		}
		if t.cfg.Ancestors != "" {
			s.ancestors = values(d.Lookup(t.cfg.Ancestors))
		}
		if t.cfg.Path != "" {
			s.path = d.Lookup(t.cfg.Path)
		}
		out = append(out, s)
	}
	return out, cur.Err()
}

// isNull reports a missing or null value.
func isNull(v bson.RawValue) bool { return v.Type == 0 || v.Type == bson.TypeNull }

// values returns an array's elements; a non-array is nil.
func values(v bson.RawValue) []bson.RawValue {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := arr.Values()
	return vals
}

// sameList reports equal lists, element by element.
func sameList(a, b []bson.RawValue) bool {
	return slices.EqualFunc(a, b, func(x, y bson.RawValue) bool { return key(x) == key(y) })
}

// sameSet reports equal sets of _ids (no duplicates allowed in a).
func sameSet(a, b []bson.RawValue) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[key(x)]++
	}
	for _, y := range b {
		if m[key(y)] != 1 {
			return false
		}
		m[key(y)]--
	}
	return true
}

// toA converts values to an array for an update.
func toA(vs []bson.RawValue) bson.A {
	a := bson.A{}
	for _, v := range vs {
		a = append(a, v)
	}
	return a
}
