package archive

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors, the same values as the pattern package's: match them
// with errors.Is.
var (
	// ErrNotFound: Get found the document neither live nor archived, or
	// Restore found no manifest for the month.
	ErrNotFound = pattern.ErrNotFound
	// ErrInvalidConfig: a Config failed Validate.
	ErrInvalidConfig = pattern.ErrInvalidConfig
)

// ErrCorrupt is wrapped by Restore when a part's checksum, size or
// document count disagrees with its manifest.
var ErrCorrupt = errors.New("exported slice does not match its manifest")

// WhenMatched is what the copy does with a document already in the
// archive (a rerun after a kill between copy and delete): the $merge
// stage's whenMatched.
type WhenMatched int

// The copy's choices for a document already archived.
const (
	// Replace (the zero value) overwrites the archived copy with the live
	// document, so a document edited between a killed run and its rerun
	// is archived as it is when deleted.
	Replace WhenMatched = iota
	// KeepExisting leaves the archived copy as it is: the archive is
	// write-once, and a live document edited after its first copy loses
	// the edit when the rerun deletes it.
	KeepExisting
)

// String returns the $merge spelling: "replace" or "keepExisting".
func (w WhenMatched) String() string {
	if w == KeepExisting {
		return "keepExisting"
	}
	return "replace"
}

// Embed resolves one extended reference while copying, so the archived
// document is self-contained: the document LocalField names in From
// (a collection of the live database) is embedded under As, as one
// subdocument ($lookup then $first), or null when it no longer exists.
type Embed struct {
	LocalField   string   // the reference, e.g. "customerId"
	From         string   // the referenced collection, e.g. "customers"
	ForeignField string   // the field it matches in From; "" is "_id"
	As           string   // where the copy goes, e.g. "customer"
	Fields       []string // the fields of From to copy; none copies all
}

// Config describes what is archived and how.
type Config struct {
	// Field is the date field that ages documents, e.g. "createdAt". A
	// document whose Field is missing or not a date is never archived.
	Field string
	// Age archives documents whose Field is older than the run's start
	// minus Age (the cutoff, computed once per run and recorded).
	Age time.Duration
	// Slice is the width of one copy-and-delete step, oldest first; zero
	// is 24 hours. A slice is one $merge and one delete: keep it small
	// enough that one slice's delete is a modest write.
	Slice time.Duration
	// Filter narrows what is archived beyond age, e.g. {status:
	// "closed"} or {keep: {$ne: true}} for a "keep forever" marker. Plain
	// query operators only; nil archives every old document.
	Filter bson.D
	// WhenMatched is the copy's $merge whenMatched: Replace (default) or
	// KeepExisting.
	WhenMatched WhenMatched
	// Embed lists the extended references resolved into the copy.
	Embed []Embed
	// ProvenDelete deletes, per slice, only the _ids read back from the
	// archive (in batches), instead of one deleteMany with the slice's
	// filter: a document inserted into the slice's range between copy
	// and delete (a backdated write) then stays live until the next run
	// instead of being deleted unarchived. It costs a read of the slice's
	// _ids from the archive.
	ProvenDelete bool
	// PartDocs is how many documents Export writes per part file; zero is
	// 10,000.
	PartDocs int
}

// withDefaults fills the zero Slice and PartDocs.
func (c Config) withDefaults() Config {
	if c.Slice == 0 {
		c.Slice = 24 * time.Hour
	}
	if c.PartDocs == 0 {
		c.PartDocs = 10_000
	}
	return c
}

// Validate reports an empty or malformed Field, a negative Age, Slice or
// PartDocs, an unknown WhenMatched and an incomplete Embed. Its errors
// wrap ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(what string, args ...any) error {
		return fmt.Errorf("archive: config: %w: %s", ErrInvalidConfig, fmt.Sprintf(what, args...))
	}
	if err := checkPath(c.Field); err != nil {
		return bad("Field: %v", err)
	}
	if c.Field == "_id" {
		return bad("Field: _id is not a date field")
	}
	if c.Age < 0 || c.Slice < 0 || c.PartDocs < 0 {
		return bad("Age, Slice and PartDocs must not be negative")
	}
	if c.Slice > 0 && c.Slice < time.Millisecond {
		return bad("Slice %v is under a millisecond, the precision of a BSON date", c.Slice)
	}
	if c.WhenMatched != Replace && c.WhenMatched != KeepExisting {
		return bad("WhenMatched: unknown value %d", int(c.WhenMatched))
	}
	for i, e := range c.Embed {
		if err := checkPath(e.LocalField); err != nil {
			return bad("Embed[%d].LocalField: %v", i, err)
		}
		if err := checkPath(e.As); err != nil {
			return bad("Embed[%d].As: %v", i, err)
		}
		if e.From == "" || strings.ContainsAny(e.From, "$\x00") {
			return bad("Embed[%d].From: %q is not a collection name", i, e.From)
		}
		if e.ForeignField != "" {
			if err := checkPath(e.ForeignField); err != nil {
				return bad("Embed[%d].ForeignField: %v", i, err)
			}
		}
		if e.As == "_id" || e.As == c.Field {
			return bad("Embed[%d].As: %q would overwrite a field the archive needs", i, e.As)
		}
		for _, f := range e.Fields {
			if err := checkPath(f); err != nil {
				return bad("Embed[%d].Fields: %v", i, err)
			}
		}
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
		if part == "" || strings.HasPrefix(part, "$") || strings.ContainsRune(part, 0) {
			return fmt.Errorf("%q is not a field path", p)
		}
	}
	return nil
}
