package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$match", 0, parseMatch) }

// stageMatch is {$match: filter}: it passes the documents that satisfy
// the filter. https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/match/
type stageMatch struct {
	spec    bson.Raw
	filters []*Filter // more than one after adjacent $match stages merge
	// parts holds the filter document of each entry of filters, and
	// compile compiles a filter document in the stage's scope; the
	// optimizer splits a $match with them. compile is nil for a $match
	// the optimizer made itself, which it moves only whole.
	parts   []bson.Raw
	compile func(bson.Raw) (*Filter, error)
}

// parseMatch parses $match; 15959 when the filter is not a document.
func parseMatch(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.Code(15959), "the match filter must be an expression in an object")
	}
	f, err := compileFilter(doc, pc.scope, pc.vars, pc.opts.Now)
	if err != nil {
		return nil, err
	}
	compile := func(d bson.Raw) (*Filter, error) { return compileFilter(d, pc.scope, pc.vars, pc.opts.Now) }
	return &stageMatch{spec: doc, filters: []*Filter{f}, parts: []bson.Raw{doc}, compile: compile}, nil
}

func (s *stageMatch) name() string { return "$match" }

func (s *stageMatch) explain() bson.D { return bson.D{{Key: "$match", Value: s.spec}} }

func (s *stageMatch) deps(d *depSet) bool {
	paths, whole := s.paths()
	d.add(paths...)
	if whole {
		d.whole = true
	}
	return false
}

// paths returns the fields the match reads and whether it needs the
// whole document.
func (s *stageMatch) paths() ([]string, bool) {
	var out []string
	whole := false
	for _, f := range s.filters {
		p, w := f.paths()
		out = append(out, p...)
		whole = whole || w
	}
	return out, whole
}

func (s *stageMatch) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			ok, err := s.matches(c, d)
			if err != nil {
				return nil, err
			}
			if ok {
				return d, nil
			}
		}
	}, close: in.Close}, nil
}

// matches reports whether d passes every filter.
func (s *stageMatch) matches(c *expr.Ctx, d bson.Raw) (bool, error) {
	for _, f := range s.filters {
		ok, err := f.Match(c, d)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}
