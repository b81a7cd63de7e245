package tree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors, the same values as the pattern package's: match them
// with errors.Is.
var (
	// ErrParentNotFound: Insert or Move names a parent that does not exist.
	ErrParentNotFound = pattern.ErrParentNotFound
	// ErrNotFound: the node a verb names does not exist.
	ErrNotFound = pattern.ErrNotFound
	// ErrHasChildren: Delete under the Refuse policy found children.
	ErrHasChildren = pattern.ErrHasChildren
	// ErrInvalidConfig: a Config failed Validate.
	ErrInvalidConfig = pattern.ErrInvalidConfig
)

// ErrCycle is wrapped by Move when the new parent is the node itself or
// one of its descendants.
var ErrCycle = errors.New("move would make a node its own ancestor")

// ErrBadID is wrapped by Insert when the node has no _id, or, with a
// materialized path, an _id that is not a non-empty string free of the
// separator.
var ErrBadID = errors.New("node _id cannot be used")

// Policy says what deleting a node does to its subtree; it is
// pattern.Policy, shared by every package.
type Policy = pattern.Policy

// The delete policies, as this package applies them:
const (
	// Refuse deletes a leaf only: a node with children gives
	// ErrHasChildren.
	Refuse = pattern.Refuse
	// Cascade deletes the node and its whole subtree.
	Cascade = pattern.Cascade
	// Detach deletes the node and makes each of its children the root of
	// its own tree, rewriting their subtrees' ancestors and paths.
	Detach = pattern.Detach
)

// Config names the representations kept. Parent references are always
// kept: they are the truth the others are derived from and that Verify
// checks them against.
type Config struct {
	// Parent is the field holding the parent's _id, null for a root;
	// zero is "parent".
	Parent string
	// Children, when set, is the array of the children's _ids kept on
	// each node ("children"; child references).
	Children string
	// Ancestors, when set, is the array of the ancestors' _ids, root
	// first, kept on each node ("ancestors"; array of ancestors).
	Ancestors string
	// Path, when set, is the materialized path kept on each node
	// ("path"): the ancestors' _ids each followed by Separator, after a
	// leading Separator (",Books,Programming," under Programming; ","
	// for a root). _ids must then be strings without the Separator.
	Path string
	// Separator separates the path's _ids; zero is ",".
	Separator string
	// OnDelete is Delete's policy; zero is Refuse.
	OnDelete Policy
}

// withDefaults fills the zero Parent and Separator.
func (c Config) withDefaults() Config {
	if c.Parent == "" {
		c.Parent = "parent"
	}
	if c.Separator == "" {
		c.Separator = ","
	}
	return c
}

// Validate reports a field name that is not a plain top-level name, two
// representations on one field, a Separator with a NUL, and an unknown
// Policy. Its errors wrap ErrInvalidConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	seen := map[string]string{}
	for _, f := range []struct{ name, v string }{{"Parent", c.Parent}, {"Children", c.Children}, {"Ancestors", c.Ancestors}, {"Path", c.Path}} {
		if f.v == "" {
			continue
		}
		if f.v == "_id" || strings.ContainsAny(f.v, ".$\x00") {
			return fmt.Errorf("tree: config: %s: %w: %q is not a top-level field name", f.name, ErrInvalidConfig, f.v)
		}
		if other, ok := seen[f.v]; ok {
			return fmt.Errorf("tree: config: %w: %s and %s are both %q", ErrInvalidConfig, other, f.name, f.v)
		}
		seen[f.v] = f.name
	}
	if strings.ContainsRune(c.Separator, 0) {
		return fmt.Errorf("tree: config: Separator: %w: holds a NUL", ErrInvalidConfig)
	}
	if c.OnDelete < Refuse || c.OnDelete > Detach {
		return fmt.Errorf("tree: config: OnDelete: %w: %v", ErrInvalidConfig, c.OnDelete)
	}
	return nil
}
