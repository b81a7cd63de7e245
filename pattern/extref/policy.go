package extref

import "github.com/formworkdb/formwork/pattern"

// Policy says what deleting a parent does to its children; it is
// pattern.Policy, shared by every package.
type Policy = pattern.Policy

// The parent-delete policies, as this package applies them:
const (
	// Refuse keeps a source that live documents still refer to. Delete
	// checks before deleting and fails with ErrHasChildren; a delete made
	// elsewhere and handed to Apply is reported (ErrHasChildren, the
	// references left dangling), and inside a transaction that aborts it.
	Refuse = pattern.Refuse
	// Cascade deletes the live referencing documents with their source.
	Cascade = pattern.Cascade
	// Detach keeps the live referencing documents and removes their
	// reference, or, with Config.DetachMark, marks it and keeps the copy
	// as it was at the delete.
	Detach = pattern.Detach
)
