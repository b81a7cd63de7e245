// Package pattern holds what the pattern packages share: the sentinel
// errors every package wraps, the Change and Dependent types through which
// one logical write maintains every derived copy of a collection, and
// Atomic, which runs a multi-document write in a transaction where the
// deployment has them.
//
// The packages under pattern/ each implement one schema design pattern on
// the official driver. A derived copy (subset's newest-N window, computed's
// running totals, extref's embedded copies, outlier's overflow counters) is
// a Dependent of the collection it is derived from; a Source (see
// source.go) performs each write on that collection and hands the Change to
// every Dependent, and Applied does the same for a write the application
// made itself.
package pattern

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Sentinel errors shared by every pattern package; match them with
// errors.Is. Packages wrap them with what was not found.
var (
	// ErrParentNotFound: the parent a write names does not exist.
	ErrParentNotFound = errors.New("parent not found")
	// ErrNotFound: the child, source document or element a write names
	// does not exist.
	ErrNotFound = errors.New("not found")
	// ErrHasChildren: a parent delete under the Refuse policy found
	// children that still reference the parent.
	ErrHasChildren = errors.New("parent still has children")
	// ErrInvalidConfig: a Config failed Validate.
	ErrInvalidConfig = errors.New("invalid config")
)

// Op is the kind of a Change.
type Op int

// The kinds of Change. A move to another parent is an Update whose Before
// and After name different parents.
const (
	Insert Op = iota + 1
	Update
	Delete
)

// String returns "insert", "update" or "delete".
func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Change is one write already made on a source collection, described by
// the whole document before and after it: Before is nil for an Insert,
// After is nil for a Delete. Both are full documents, so each Dependent
// can tell what moved (parent, value, time) without another read.
type Change struct {
	Op     Op
	Before bson.Raw
	After  bson.Raw
}

// ID returns the _id of the changed document.
func (c Change) ID() bson.RawValue {
	if c.After != nil {
		return c.After.Lookup("_id")
	}
	return c.Before.Lookup("_id")
}

// Dependent is a copy derived from a source collection, kept up to date
// by applying every Change made on that collection.
type Dependent interface {
	// Name says what the copy is, for reports ("subset products.recentReviews").
	Name() string
	// Apply brings the copy up to date with a change already made on the
	// source. It is idempotent where the copy allows (a window), and
	// applied exactly once per change where it cannot be (a running sum).
	Apply(ctx context.Context, c Change) error
	// EnsureIndexes creates the indexes the copy's writes and reads need.
	EnsureIndexes(ctx context.Context) error
	// Check compares the copy with the source and, when repair is true,
	// rewrites what differs.
	Check(ctx context.Context, repair bool) (Result, error)
}

// Result summarises one Dependent's Check.
type Result struct {
	Name     string   // the Dependent's Name
	Checked  int      // documents (parents, copies) compared
	Problems int      // differences found
	Repaired int      // differences fixed (0 unless repairing)
	Details  []string // one line per difference, at most a few hundred
}

// OK reports whether the check found nothing to fix.
func (r Result) OK() bool { return r.Problems == 0 }

// Policy is what deleting a parent (or a referenced source document) does
// to the children that still reference it. Each package documents what
// each policy means for its copies; Refuse, the zero value, is the safe
// default.
type Policy int

// The parent-delete policies.
const (
	// Refuse keeps a parent that children still reference: the delete
	// fails with ErrHasChildren.
	Refuse Policy = iota
	// Cascade deletes the children with the parent.
	Cascade
	// Detach deletes the parent and leaves its children, referencing a
	// parent that no longer exists (or, where a package says so, marked).
	Detach
)

// String returns "refuse", "cascade" or "detach".
func (p Policy) String() string {
	switch p {
	case Refuse:
		return "refuse"
	case Cascade:
		return "cascade"
	case Detach:
		return "detach"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// JobsCollection is the collection, in the database a job works on, where
// the resumable jobs (archive, migrate, recompute) record their progress:
// one document per job, its _id naming the job and the collection.
const JobsCollection = "formwork_jobs"
