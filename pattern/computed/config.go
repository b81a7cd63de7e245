package computed

import (
	"errors"
	"fmt"
	"strings"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors, the same values as the pattern package's: match them
// with errors.Is.
var (
	// ErrParentNotFound: the parent a child names (on insert, or as the
	// parent it moves to) or a verb is given does not exist.
	ErrParentNotFound = pattern.ErrParentNotFound
	// ErrNotFound: the child a verb names does not exist.
	ErrNotFound = pattern.ErrNotFound
	// ErrHasChildren: DeleteParent under the Refuse policy found children.
	ErrHasChildren = pattern.ErrHasChildren
	// ErrInvalidConfig: a Config failed Validate.
	ErrInvalidConfig = pattern.ErrInvalidConfig
)

// ErrNotNumber is wrapped by the verbs given a value that is not an
// int32, int64 or double.
var ErrNotNumber = errors.New("value is not an int32, int64 or double")

// ErrContention is wrapped when a compare-and-set of a parent's totals
// (Recompute, or the min/max recompute after a removal) lost to
// concurrent writers on every one of maxAttempts attempts. The totals
// stay as they were; Check with repair fixes them once writes calm down.
var ErrContention = errors.New("totals changed concurrently on every attempt")

// Stat is a set of running statistics a parent keeps over its children.
type Stat uint8

// The statistics; combine them with |. The average is derived from Sum
// and Count on read, never stored.
const (
	Sum Stat = 1 << iota
	Count
	Min
	Max
)

// has reports whether s includes all of o.
func (s Stat) has(o Stat) bool { return s&o == o }

// String lists the statistics, e.g. "sum|count|min".
func (s Stat) String() string {
	var parts []string
	for _, x := range []struct {
		s    Stat
		name string
	}{{Sum, "sum"}, {Count, "count"}, {Min, "min"}, {Max, "max"}} {
		if s.has(x.s) {
			parts = append(parts, x.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Policy says what deleting a parent does to its children; it is
// pattern.Policy, shared by every package.
type Policy = pattern.Policy

// The parent-delete policies, as this package applies them:
const (
	// Refuse leaves everything as it is and returns ErrHasChildren when
	// the parent has children.
	Refuse = pattern.Refuse
	// Cascade deletes the parent, then its children.
	Cascade = pattern.Cascade
	// Detach deletes the parent and leaves its children, which then
	// reference no parent and count nowhere.
	Detach = pattern.Detach
)

// Config describes the running totals one parent collection keeps over
// one child collection.
type Config struct {
	// Parent is the child field holding the parent's _id, e.g.
	// "productId". It must hold values of the parents' _id type.
	Parent string
	// Value is the child field the statistics are kept over, e.g.
	// "stars": an int32, int64 or double. A child without a number there
	// counts nowhere. Parent and Value may be dotted paths through
	// subdocuments, never through arrays.
	Value string
	// Target is the parent's subdocument holding the totals, e.g.
	// "rating" or "stats.rating".
	Target string
	// Stats says which statistics to keep; zero keeps Sum|Count.
	Stats Stat
	// OnParentDelete is DeleteParent's policy; zero is Refuse.
	OnParentDelete Policy
	// WhenNotMatched is what RecomputeAll does with children that name a
	// parent that does not exist, as $merge's whenNotMatched: "discard"
	// (zero: they count nowhere), "insert" (a stub parent holding only
	// the totals is created) or "fail" (RecomputeAll fails with
	// MergeStageNoMatchingDocument, 13113, after updating every existing
	// parent).
	WhenNotMatched string
}

// withDefaults fills the zero Stats.
func (c Config) withDefaults() Config {
	if c.Stats == 0 {
		c.Stats = Sum | Count
	}
	if c.WhenNotMatched == "" {
		c.WhenNotMatched = "discard"
	}
	return c
}

// Validate reports an empty, $-prefixed or malformed dotted path, a Target
// on _id, Parent and Value naming the same field, an unknown Stat or an
// unknown Policy. Its errors wrap ErrInvalidConfig.
func (c Config) Validate() error {
	for _, f := range []struct{ name, v string }{{"Parent", c.Parent}, {"Value", c.Value}, {"Target", c.Target}} {
		if err := checkPath(f.v); err != nil {
			return fmt.Errorf("computed: config: %s: %w: %v", f.name, ErrInvalidConfig, err)
		}
	}
	if c.Target == "_id" || strings.HasPrefix(c.Target, "_id.") {
		return fmt.Errorf("computed: config: Target: %w: %q is in _id", ErrInvalidConfig, c.Target)
	}
	if c.Parent == c.Value || strings.HasPrefix(c.Value, c.Parent+".") || strings.HasPrefix(c.Parent, c.Value+".") {
		return fmt.Errorf("computed: config: %w: Parent %q and Value %q overlap", ErrInvalidConfig, c.Parent, c.Value)
	}
	if c.Stats&^(Sum|Count|Min|Max) != 0 {
		return fmt.Errorf("computed: config: Stats: %w: unknown bits %#x", ErrInvalidConfig, uint8(c.Stats))
	}
	switch c.WhenNotMatched {
	case "", "discard", "insert", "fail":
	default:
		return fmt.Errorf("computed: config: WhenNotMatched: %w: %q is not discard, insert or fail", ErrInvalidConfig, c.WhenNotMatched)
	}
	if c.OnParentDelete < Refuse || c.OnParentDelete > Detach {
		return fmt.Errorf("computed: config: OnParentDelete: %w: %v", ErrInvalidConfig, c.OnParentDelete)
	}
	return nil
}

// maxPathParts bounds the components of a configured path.
const maxPathParts = 32

// checkPath accepts a field name or a dotted path of field names, none
// empty, none starting with $.
func checkPath(p string) error {
	if p == "" {
		return errors.New("empty field name")
	}
	parts := strings.Split(p, ".")
	if len(parts) > maxPathParts {
		return fmt.Errorf("%q has more than %d parts", p, maxPathParts)
	}
	for _, part := range parts {
		if part == "" || strings.HasPrefix(part, "$") {
			return fmt.Errorf("%q is not a field path", p)
		}
	}
	return nil
}
