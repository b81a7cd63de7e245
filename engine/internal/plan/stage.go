package plan

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// state is the outcome of one unit of work (mongod's PlanStage::StageState).
type state int

const (
	advanced state = iota
	needTime
	isEOF
)

// member is a row moving up a stage tree: a record id with its document
// (nil until fetched) or the index key it came from.
type member struct {
	rid int64
	doc bson.Raw
	key []byte
	ix  *indexInfo
	// from and fromIx are the index key the member was read from and
	// its index, kept through FETCH for find's returnKey.
	from   []byte
	fromIx *indexInfo
}

// counters are the statistics every stage keeps (mongod's CommonStats).
type counters struct {
	works, advanced, needTime int64
	eof                       bool
}

// stage is one node of an executable plan.
type stage interface {
	doWork(ctx context.Context) (state, *member, error)
	counters() *counters
	children() []stage
	// describe appends the stage's static fields and, when stats is set,
	// its specific statistics, in mongod's field order.
	describe(d bson.D, stats bool) bson.D
	name() string
	close()
}

// work runs one unit of work of s and counts it.
func work(ctx context.Context, s stage) (state, *member, error) {
	c := s.counters()
	c.works++
	st, m, err := s.doWork(ctx)
	if err != nil {
		return st, nil, err
	}
	switch st {
	case advanced:
		c.advanced++
	case needTime:
		c.needTime++
	case isEOF:
		c.eof = true
	}
	return st, m, nil
}

// env is what stages share: the reader, the collection and the filter.
type env struct {
	rd     storage.Reader
	coll   *storage.Collection
	filter *match.Filter
}

// collScan reads every document in record order (COLLSCAN).
type collScan struct {
	counters_ counters
	env       *env
	reverse   bool
	filterX   *expr
	recs      *storage.Records
	done      bool
	docs      int64
}

func (s *collScan) counters() *counters { return &s.counters_ }
func (s *collScan) children() []stage   { return nil }
func (s *collScan) name() string        { return "COLLSCAN" }

func (s *collScan) doWork(ctx context.Context) (state, *member, error) {
	if s.done {
		return isEOF, nil, nil
	}
	if s.recs == nil {
		r, err := s.env.rd.Scan(s.env.coll, s.reverse)
		if err != nil {
			return 0, nil, err
		}
		s.recs = r
	}
	if !s.recs.Next() {
		s.done = true
		err := s.recs.Err()
		s.recs.Close()
		s.recs = nil
		return isEOF, nil, err
	}
	s.docs++
	if s.docs%1024 == 0 {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
	}
	doc, err := s.recs.Doc()
	if err != nil {
		return 0, nil, err
	}
	if s.env.filter != nil {
		if ok, err := s.env.filter.MatchErr(doc); err != nil || !ok {
			return needTime, nil, err
		}
	}
	return advanced, &member{rid: s.recs.RecordID(), doc: doc}, nil
}

func (s *collScan) close() {
	if s.recs != nil {
		s.recs.Close()
		s.recs = nil
	}
}

func (s *collScan) describe(d bson.D, stats bool) bson.D {
	if s.filterX != nil {
		d = append(d, bson.E{Key: "filter", Value: s.filterX.serialize("")})
	}
	dir := "forward"
	if s.reverse {
		dir = "backward"
	}
	d = append(d, bson.E{Key: "direction", Value: dir})
	if stats {
		d = append(d, bson.E{Key: "docsExamined", Value: int32(s.docs)})
	}
	return d
}

// fetch turns index entries into documents and applies the filter (FETCH).
type fetch struct {
	counters_ counters
	env       *env
	child     stage
	filterX   *expr // the residual filter explain shows
	docs      int64
}

func (s *fetch) counters() *counters { return &s.counters_ }
func (s *fetch) children() []stage   { return []stage{s.child} }
func (s *fetch) name() string        { return "FETCH" }
func (s *fetch) close()              { s.child.close() }

func (s *fetch) doWork(ctx context.Context) (state, *member, error) {
	st, m, err := work(ctx, s.child)
	if err != nil || st != advanced {
		return st, nil, err
	}
	if m.doc == nil || m.key != nil {
		s.docs++
		doc, err := s.env.rd.Fetch(s.env.coll, m.rid)
		if err != nil {
			return 0, nil, err
		}
		if doc == nil {
			return needTime, nil, nil
		}
		m = &member{rid: m.rid, doc: doc, from: m.from, fromIx: m.fromIx}
	}
	// I1: the full filter, whatever the bounds already guaranteed.
	if s.env.filter != nil {
		if ok, err := s.env.filter.MatchErr(m.doc); err != nil || !ok {
			return needTime, nil, err
		}
	}
	return advanced, m, nil
}

func (s *fetch) describe(d bson.D, stats bool) bson.D {
	if s.filterX != nil {
		d = append(d, bson.E{Key: "filter", Value: s.filterX.serialize("")})
	}
	if stats {
		d = append(d, bson.E{Key: "docsExamined", Value: int32(s.docs)}, bson.E{Key: "alreadyHasObj", Value: int32(0)})
	}
	return d
}

// idHack answers an _id equality through the _id index (IDHACK).
type idHack struct {
	counters_ counters
	env       *env
	key       []byte
	done      bool
	keys      int64
	docs      int64
}

func (s *idHack) counters() *counters { return &s.counters_ }
func (s *idHack) children() []stage   { return nil }
func (s *idHack) name() string        { return "IDHACK" }
func (s *idHack) close()              {}

func (s *idHack) doWork(ctx context.Context) (state, *member, error) {
	if s.done {
		return isEOF, nil, nil
	}
	s.done = true
	rid, ok, err := s.env.rd.Lookup(s.env.coll, s.env.coll.Indexes[0], s.key)
	if err != nil || !ok {
		return isEOF, nil, err
	}
	s.keys++
	s.docs++
	doc, err := s.env.rd.Fetch(s.env.coll, rid)
	if err != nil || doc == nil {
		return isEOF, nil, err
	}
	if s.env.filter != nil {
		if ok, err := s.env.filter.MatchErr(doc); err != nil || !ok {
			return isEOF, nil, err
		}
	}
	return advanced, &member{rid: rid, doc: doc}, nil
}

func (s *idHack) describe(d bson.D, stats bool) bson.D {
	if stats {
		d = append(d, bson.E{Key: "keysExamined", Value: int32(s.keys)}, bson.E{Key: "docsExamined", Value: int32(s.docs)})
	}
	return d
}

func newIDHack(e *env, id bson.RawValue) *idHack {
	return &idHack{env: e, key: keystring.AppendValue(nil, id, false)}
}

// skipStage drops the first n results (SKIP).
type skipStage struct {
	counters_ counters
	child     stage
	n, left   int64
}

func (s *skipStage) counters() *counters { return &s.counters_ }
func (s *skipStage) children() []stage   { return []stage{s.child} }
func (s *skipStage) name() string        { return "SKIP" }
func (s *skipStage) close()              { s.child.close() }

func (s *skipStage) doWork(ctx context.Context) (state, *member, error) {
	st, m, err := work(ctx, s.child)
	if err != nil || st != advanced {
		return st, nil, err
	}
	if s.left > 0 {
		s.left--
		return needTime, nil, nil
	}
	return advanced, m, nil
}

func (s *skipStage) describe(d bson.D, _ bool) bson.D {
	return append(d, bson.E{Key: "skipAmount", Value: int32(s.n)})
}

// limitStage stops after n results (LIMIT).
type limitStage struct {
	counters_ counters
	child     stage
	n, seen   int64
}

func (s *limitStage) counters() *counters { return &s.counters_ }
func (s *limitStage) children() []stage   { return []stage{s.child} }
func (s *limitStage) name() string        { return "LIMIT" }
func (s *limitStage) close()              { s.child.close() }

func (s *limitStage) doWork(ctx context.Context) (state, *member, error) {
	if s.seen >= s.n {
		return isEOF, nil, nil
	}
	st, m, err := work(ctx, s.child)
	if err != nil || st != advanced {
		return st, nil, err
	}
	s.seen++
	return advanced, m, nil
}

func (s *limitStage) describe(d bson.D, _ bool) bson.D {
	return append(d, bson.E{Key: "limitAmount", Value: int32(s.n)})
}

// projStage is a projection stage as explain shows it. The projection
// itself is applied by the caller to the rows; for a covered plan this
// stage turns index keys into documents.
type projStage struct {
	counters_ counters
	env       *env
	child     stage
	kind      string // PROJECTION_SIMPLE, PROJECTION_DEFAULT, PROJECTION_COVERED
	spec      bson.Raw
	covered   *coverer
}

func (s *projStage) counters() *counters { return &s.counters_ }
func (s *projStage) children() []stage   { return []stage{s.child} }
func (s *projStage) name() string        { return s.kind }
func (s *projStage) close()              { s.child.close() }

func (s *projStage) doWork(ctx context.Context) (state, *member, error) {
	st, m, err := work(ctx, s.child)
	if err != nil || st != advanced {
		return st, nil, err
	}
	if s.covered != nil && m.key != nil {
		doc, err := s.covered.doc(s.env, m)
		if err != nil {
			return 0, nil, err
		}
		if doc == nil {
			return needTime, nil, nil
		}
		m = &member{rid: m.rid, doc: doc, from: m.from, fromIx: m.fromIx}
	}
	return advanced, m, nil
}

func (s *projStage) describe(d bson.D, _ bool) bson.D {
	return append(d, bson.E{Key: "transformBy", Value: s.spec})
}

// orStage returns the union of its children's results, each record once
// (OR).
type orStage struct {
	counters_ counters
	kids      []stage
	cur       int
	seen      map[int64]struct{}
	tested    int64
	dropped   int64
	filterX   *expr
}

func (s *orStage) counters() *counters { return &s.counters_ }
func (s *orStage) children() []stage   { return s.kids }
func (s *orStage) name() string        { return "OR" }

func (s *orStage) close() {
	for _, k := range s.kids {
		k.close()
	}
}

func (s *orStage) doWork(ctx context.Context) (state, *member, error) {
	if s.cur >= len(s.kids) {
		return isEOF, nil, nil
	}
	st, m, err := work(ctx, s.kids[s.cur])
	if err != nil {
		return 0, nil, err
	}
	switch st {
	case isEOF:
		s.cur++
		if s.cur >= len(s.kids) {
			return isEOF, nil, nil
		}
		return needTime, nil, nil
	case needTime:
		return needTime, nil, nil
	}
	s.tested++
	if _, dup := s.seen[m.rid]; dup {
		s.dropped++
		return needTime, nil, nil
	}
	s.seen[m.rid] = struct{}{}
	return advanced, m, nil
}

func (s *orStage) describe(d bson.D, stats bool) bson.D {
	if s.filterX != nil {
		d = append(d, bson.E{Key: "filter", Value: s.filterX.serialize("")})
	}
	if stats {
		d = append(d, bson.E{Key: "dupsTested", Value: int32(s.tested)}, bson.E{Key: "dupsDropped", Value: int32(s.dropped)})
	}
	return d
}
