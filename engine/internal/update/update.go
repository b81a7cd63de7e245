package update

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// MaxDocumentSize is the largest document an update may produce
// (BSONObjMaxUserSize, 16 MiB).
const MaxDocumentSize = 16 * 1024 * 1024

// Update is a compiled update: an operator tree, or a replacement
// document. It is immutable and safe for concurrent use by any number of
// goroutines.
type Update struct {
	root        *objNode // operator update; nil for a replacement
	replacement bson.Raw // replacement document; nil for an operator update
	filters     map[string]*arrayFilter
	coll        *collation.Collator // see WithCollation
}

// applyCtx is the state of one application of an Update.
type applyCtx struct {
	root     *elem
	matched  string // array index for "$", "" when the query matched none
	insert   bool   // building an upsert document: $setOnInsert applies
	validate bool   // check stored field names and depth (not for upserts)
	now      time.Time
	tsInc    uint32
	filters  map[string]*arrayFilter
	taken    []string // path of the element being applied to
	toCreate []string // missing parts below it
	// coll compares strings in $min, $max, $addToSet, $pull and $pullAll
	// of values (nil: the simple collation).
	coll *collation.Collator
	// ctx interrupts a long application (maxTimeMS, a client gone): tick
	// checks it every tickEvery steps. nil: never interrupted.
	ctx   context.Context
	steps int
}

// tickEvery is how many steps (fields applied, values added or pulled) an
// application takes between two looks at its context.
const tickEvery = 1024

// tick counts one step and, every tickEvery steps, returns MongoDB's
// error when the context is done: MaxTimeMSExpired past the deadline,
// Interrupted when cancelled.
func (c *applyCtx) tick() error {
	c.steps++
	if c.ctx == nil || c.steps%tickEvery != 0 {
		return nil
	}
	switch err := c.ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")
	default:
		return mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
	}
}

// Compile parses an update specification: a document of update operators
// ({$set: ...}), a replacement document (whose first field does not start
// with '$'), or a pipeline (an array), which answers NotImplemented.
// arrayFilters are the update's arrayFilters option, each a document.
//
// Errors follow mongod 7.0: FailedToParse for an unknown operator or an
// unused array filter, BadValue, TypeMismatch and FailedToParse for bad
// operands, ConflictingUpdateOperators for two operators on overlapping
// paths, EmptyFieldName for empty path parts. Neither argument is retained
// beyond the returned Update, which copies what it keeps.
func Compile(spec bson.RawValue, arrayFilters []bson.Raw) (*Update, error) {
	switch spec.Type {
	case bson.TypeArray:
		return nil, mongoerr.New(mongoerr.NotImplemented,
			"pipeline-style updates (an array of aggregation stages) are not supported yet")
	case bson.TypeEmbeddedDocument:
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
	}
	doc := bson.Raw(bytes.Clone(spec.Value))
	if err := validDeep(doc, 0); err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid update document: %v", err)
	}
	elems, _ := doc.Elements()
	if len(elems) == 0 || !strings.HasPrefix(elems[0].Key(), "$") {
		// mongod parses arrayFilters before it looks at the update; a
		// replacement then ignores them.
		if _, err := parseArrayFilters(arrayFilters); err != nil {
			return nil, err
		}
		return &Update{replacement: doc}, nil
	}
	filters, err := parseArrayFilters(arrayFilters)
	if err != nil {
		return nil, err
	}
	c := &compiler{root: newObjNode(), filters: filters, used: map[string]bool{}}
	for _, el := range elems {
		if err := c.operator(el.Key(), el.Value()); err != nil {
			return nil, err
		}
	}
	if err := unusedFilterError(filters, c.used, doc); err != nil {
		return nil, err
	}
	sortTree(c.root)
	return &Update{root: c.root, filters: filters}, nil
}

// unusedFilterError returns FailedToParse for the first array filter (in
// identifier order) that no path of the update uses.
func unusedFilterError(filters map[string]*arrayFilter, used map[string]bool, doc bson.Raw) error {
	ids := make([]string, 0, len(filters))
	for id := range filters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !used[id] {
			return mongoerr.Newf(mongoerr.FailedToParse,
				"The array filter for identifier '%s' was not used in the update %s", id, docString(doc))
		}
	}
	return nil
}

// IsReplacement reports whether u replaces whole documents rather than
// applying operators.
func (u *Update) IsReplacement() bool { return u.replacement != nil }

// Apply applies u to doc, which must be valid BSON and is not modified.
// pos is the array index the query matched for the positional operator
// ($), as returned by match's MatchPos, or -1 when it matched none. now is
// the time $currentDate writes.
//
// Apply returns the new document and whether it differs; when nothing
// changed it returns doc itself and false. The new document may share no
// memory with doc. _id always stays the first field. Errors are
// *mongoerr.Error: ImmutableField, TypeMismatch, BadValue, PathNotViable,
// ConflictingUpdateOperators (positional merges), BSONObjectTooLarge and
// others as mongod reports them. Apply is safe for concurrent use.
func (u *Update) Apply(doc bson.Raw, pos int, now time.Time) (bson.Raw, bool, error) {
	return u.ApplyContext(context.Background(), doc, pos, now)
}

// ApplyContext is Apply, interrupted when ctx is done: a long operator
// update (many fields or values) looks at ctx every tickEvery steps and
// then fails with MaxTimeMSExpired (deadline) or Interrupted.
func (u *Update) ApplyContext(ctx context.Context, doc bson.Raw, pos int, now time.Time) (bson.Raw, bool, error) {
	if u.replacement != nil {
		out, changed, err := u.replace(doc, false, now)
		if err != nil || !changed {
			return doc, false, err
		}
		if len(out) > MaxDocumentSize {
			return doc, false, mongoerr.Newf(mongoerr.BSONObjectTooLarge,
				"Resulting document after update is larger than %d", MaxDocumentSize)
		}
		return out, true, nil
	}
	root := newRoot(doc)
	c := &applyCtx{root: root, validate: true, now: now, filters: u.filters, coll: u.coll, ctx: ctx}
	if pos >= 0 {
		c.matched = itoa(pos)
	}
	changed, err := u.root.apply(c, root)
	if err != nil {
		return doc, false, err
	}
	if !changed {
		return doc, false, nil
	}
	idFirst(root)
	out := bson.Raw(root.encode(nil))
	if len(out) > MaxDocumentSize {
		return doc, false, mongoerr.Newf(mongoerr.BSONObjectTooLarge,
			"Resulting document after update is larger than %d", MaxDocumentSize)
	}
	return out, true, nil
}

// idFirst moves _id to the front of the root document.
func idFirst(root *elem) {
	kids := root.children()
	for i, k := range kids {
		if k.name == "_id" {
			if i > 0 {
				copy(kids[1:i+1], kids[:i])
				kids[0] = k
			}
			return
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// validDeep validates doc and, recursively, every embedded document and
// array (the driver's Validate checks only lengths of nested values).
func validDeep(doc bson.Raw, depth int) error {
	if err := doc.Validate(); err != nil {
		return err
	}
	if depth > 200 {
		return errors.New("document nested too deeply")
	}
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	for _, el := range elems {
		v := el.Value()
		switch v.Type {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			if err := validDeep(v.Value, depth+1); err != nil {
				return err
			}
		case bson.TypeCodeWithScope:
			_, scope, ok := v.CodeWithScopeOK()
			if !ok {
				return errors.New("invalid code with scope")
			}
			if err := validDeep(scope, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// WithCollation returns a copy of u whose $min, $max, $addToSet, $pull
// (of a value or with query conditions) and $pullAll compare strings
// under c (nil: the simple collation), as the statement's collation makes
// them in mongod. u is not changed.
func (u *Update) WithCollation(c *collation.Collator) *Update {
	cp := *u
	cp.coll = c
	return &cp
}
