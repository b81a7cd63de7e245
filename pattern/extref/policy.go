package extref

import "fmt"

// Policy is what the delete of a source document does to the live
// referencing documents that still refer to it. Frozen documents are
// records that outlive their source: no policy touches them.
type Policy int

const (
	// Refuse keeps a source that live documents still refer to. Delete
	// checks before deleting and fails with ErrHasChildren; a delete made
	// elsewhere and handed to Apply is reported (ErrHasChildren, the
	// references left dangling), and inside a transaction that aborts it.
	Refuse Policy = iota
	// Cascade deletes the live referencing documents with their source.
	Cascade
	// Detach keeps the live referencing documents and removes their
	// reference, or, with Config.DetachMark, marks it and keeps the copy
	// as it was at the delete.
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
