package command

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/engine/internal/projection"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// query is a parsed read: the documents of one collection that match a
// filter, in an order, after skip and up to limit. find, count, distinct,
// update, delete and findAndModify all select documents through it.
type query struct {
	coll      *storage.Collection // nil: the collection does not exist
	filterRaw bson.Raw
	filter    *match.Filter
	sort      *order.Order
	natural   int // $natural direction: 0 none, 1 forward, -1 backward
	skip      int64
	limit     int64 // 0: no limit
	hint      bson.RawValue
}

// row is a document with its record id.
type row struct {
	rid int64
	doc bson.Raw
}

// rowIter yields rows; next returns ok=false at the end.
type rowIter interface {
	next(ctx context.Context) (row, bool, error)
	close()
}

// setFilter compiles filter (nil or empty for all documents).
func (q *query) setFilter(filter bson.Raw) error {
	if filter == nil {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	f, err := match.Compile(filter)
	if err != nil {
		return err
	}
	q.filterRaw, q.filter = filter, f
	return nil
}

// setSort compiles a sort specification.
func (q *query) setSort(spec bson.Raw) error {
	if spec == nil {
		return nil
	}
	o, err := order.Compile(spec)
	if err != nil {
		return err
	}
	if dir, ok := o.Natural(); ok {
		q.natural = dir
		return nil
	}
	if o.Len() > 0 {
		q.sort = o
	}
	return nil
}

// checkHint validates a hint against the collection's indexes: a name or a
// key pattern of an existing index, or {$natural: ±1}.
func (q *query) checkHint() error {
	h := q.hint
	if h.Type == 0 {
		return nil
	}
	if s, ok := h.StringValueOK(); ok {
		if q.coll != nil && q.coll.IndexByName(s) != nil {
			return nil
		}
		return badHint()
	}
	d, ok := h.DocumentOK()
	if !ok {
		return mongoerr.New(mongoerr.FailedToParse, "hint must be a string or an object")
	}
	if len(d) <= 5 {
		return nil // an empty hint means no hint
	}
	if v, err := d.LookupErr("$natural"); err == nil {
		n, _ := asInt(v)
		if q.natural == 0 && n < 0 {
			q.natural = -1
		}
		return nil
	}
	if q.coll != nil {
		for _, ix := range q.coll.Indexes {
			if sameKey(ix.Key(), d) {
				return nil
			}
		}
	}
	return badHint()
}

func badHint() error {
	return mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
}

// sameKey reports whether two key patterns name the same fields with the
// same directions, comparing numbers by value.
func sameKey(a, b bson.Raw) bool {
	ae, _ := a.Elements()
	be, _ := b.Elements()
	if len(ae) != len(be) {
		return false
	}
	for i := range ae {
		if ae[i].Key() != be[i].Key() {
			return false
		}
		av, bv := ae[i].Value(), be[i].Value()
		af, aok := asFloat(av)
		bf, bok := asFloat(bv)
		if aok != bok || (aok && af != bf) || (!aok && !av.Equal(bv)) {
			return false
		}
	}
	return true
}

// idLookup returns the _id value when the filter is a plain equality on
// _id that the _id index answers exactly (mongod's IDHACK).
func (q *query) idLookup() (bson.RawValue, bool) {
	elems, err := q.filterRaw.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return bson.RawValue{}, false
	}
	v := elems[0].Value()
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d := v.Document()
		if f, err := d.IndexErr(0); err == nil && len(f.Key()) > 0 && f.Key()[0] == '$' {
			return bson.RawValue{}, false
		}
	case bson.TypeRegex, bson.TypeArray, bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
		return bson.RawValue{}, false
	}
	return v, true
}

// rows returns the selected rows read through rd. The caller closes the
// iterator; rd must outlive it.
func (q *query) rows(ctx context.Context, rd storage.Reader) (rowIter, error) {
	if q.coll == nil {
		return &sliceRows{}, nil
	}
	var it rowIter
	if id, ok := q.idLookup(); ok && q.natural == 0 && q.hint.Type == 0 {
		it = &idRows{rd: rd, c: q.coll, key: keystring.AppendValue(nil, id, false), f: q.filter}
	} else {
		recs, err := rd.Scan(q.coll, q.natural < 0)
		if err != nil {
			return nil, err
		}
		it = &scanRows{recs: recs, f: q.filter}
	}
	if q.sort != nil {
		sorted, err := q.sortRows(ctx, it)
		if err != nil {
			return nil, err
		}
		it = sorted
	}
	if q.skip > 0 || q.limit > 0 {
		it = &limitRows{in: it, skip: q.skip, limit: q.limit}
	}
	return it, nil
}

func (q *query) sortRows(ctx context.Context, in rowIter) (rowIter, error) {
	defer in.close()
	type keyed struct {
		row
		key order.Key
	}
	var all []keyed
	for {
		r, ok, err := in.next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		k, err := q.sort.Key(r.doc)
		if err != nil {
			return nil, err
		}
		all = append(all, keyed{r, k})
	}
	slices.SortStableFunc(all, func(a, b keyed) int { return q.sort.CompareKeys(a.key, b.key) })
	rows := make([]row, len(all))
	for i, k := range all {
		rows[i] = k.row
	}
	return &sliceRows{rows: rows}, nil
}

type scanRows struct {
	recs     *storage.Records
	f        *match.Filter
	examined int64
}

func (s *scanRows) next(ctx context.Context) (row, bool, error) {
	for s.recs.Next() {
		s.examined++
		if s.examined%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return row{}, false, err
			}
		}
		doc, err := s.recs.Doc()
		if err != nil {
			return row{}, false, err
		}
		if s.f.Match(doc) {
			return row{rid: s.recs.RecordID(), doc: doc}, true, nil
		}
	}
	return row{}, false, s.recs.Err()
}

func (s *scanRows) close() { s.recs.Close() }

type idRows struct {
	rd   storage.Reader
	c    *storage.Collection
	key  []byte
	f    *match.Filter
	done bool
}

func (s *idRows) next(ctx context.Context) (row, bool, error) {
	if s.done {
		return row{}, false, nil
	}
	s.done = true
	rid, ok, err := s.rd.Lookup(s.c, s.c.Indexes[0], s.key)
	if err != nil || !ok {
		return row{}, false, err
	}
	doc, err := s.rd.Fetch(s.c, rid)
	if err != nil || doc == nil || !s.f.Match(doc) {
		return row{}, false, err
	}
	return row{rid: rid, doc: doc}, true, nil
}

func (s *idRows) close() {}

type sliceRows struct {
	rows []row
	i    int
}

func (s *sliceRows) next(context.Context) (row, bool, error) {
	if s.i >= len(s.rows) {
		return row{}, false, nil
	}
	s.i++
	return s.rows[s.i-1], true, nil
}

func (s *sliceRows) close() {}

type limitRows struct {
	in          rowIter
	skip, limit int64
	n           int64
}

func (l *limitRows) next(ctx context.Context) (row, bool, error) {
	for l.skip > 0 {
		_, ok, err := l.in.next(ctx)
		if err != nil || !ok {
			return row{}, false, err
		}
		l.skip--
	}
	if l.limit > 0 && l.n >= l.limit {
		return row{}, false, nil
	}
	r, ok, err := l.in.next(ctx)
	if ok {
		l.n++
	}
	return r, ok, err
}

func (l *limitRows) close() { l.in.close() }

// docSource turns rows into result documents, applying a projection, and
// releases the snapshot it reads when closed.
type docSource struct {
	rows rowIter
	proj *projection.Projection
	f    *match.Filter
	snap *storage.Snapshot
}

func (d *docSource) Next(ctx context.Context) (bson.Raw, error) {
	r, ok, err := d.rows.next(ctx)
	if err != nil || !ok {
		return nil, err
	}
	if d.proj == nil {
		return r.doc, nil
	}
	return d.proj.Apply(r.doc, d.f)
}

func (d *docSource) Close() {
	d.rows.close()
	if d.snap != nil {
		d.snap.Close()
	}
}
