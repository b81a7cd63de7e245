package update

import (
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/match"
)

// collQuery is a query filter used inside an update ($pull conditions,
// arrayFilters) that compares strings under the statement's collation.
// It is compiled once under the simple collation (for the parse errors)
// and again, lazily, for the last collation it was applied under; an
// Update serves concurrent applications, so the cache is atomic.
type collQuery struct {
	doc    bson.Raw
	simple queryMatcher
	last   atomic.Pointer[collCompiled]
}

// collCompiled is doc compiled under one collation.
type collCompiled struct {
	coll *collation.Collator
	q    queryMatcher
}

// compileCollQuery compiles filter under the simple collation; its errors
// are compileQuery's.
func compileCollQuery(filter bson.Raw) (*collQuery, error) {
	q, err := compileQuery(filter)
	if err != nil {
		return nil, err
	}
	return &collQuery{doc: filter, simple: q}, nil
}

// under returns the matcher for coll (nil: simple).
func (cq *collQuery) under(coll *collation.Collator) queryMatcher {
	if coll == nil {
		return cq.simple
	}
	if p := cq.last.Load(); p != nil && p.coll == coll {
		return p.q
	}
	f, err := match.CompileEnv(cq.doc, match.Env{Collation: coll})
	if err != nil {
		// The filter compiled under the simple collation; a collation
		// changes no parse rule, so this does not happen.
		return cq.simple
	}
	q := filterQuery{f}
	cq.last.Store(&collCompiled{coll: coll, q: q})
	return q
}
