package agg

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("$project", 0, func(pc *parseCtx, spec bson.RawValue) (stage, error) {
		return parseProjectStage(pc, "$project", spec)
	})
	register("$addFields", 0, func(pc *parseCtx, spec bson.RawValue) (stage, error) {
		return parseProjectStage(pc, "$addFields", spec)
	})
	register("$set", 0, func(pc *parseCtx, spec bson.RawValue) (stage, error) {
		return parseProjectStage(pc, "$set", spec)
	})
	register("$unset", 0, parseUnset)
}

// stageAddFields is $project, $addFields, $set or $unset: a projection
// applied to each document.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/project/
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/addFields/
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/unset/
type stageAddFields struct {
	stageName string
	spec      bson.Raw
	proj      *projection
}

// wrapStageErr prefixes a parse error as mongod does for projection
// stages ("Invalid $project :: caused by :: …"), keeping its code.
func wrapStageErr(name string, err error) error {
	me := mongoerr.As(err)
	if me.Code == mongoerr.InternalError {
		return err
	}
	return &mongoerr.Error{Code: me.Code, Msg: "Invalid " + name + " :: caused by :: " + me.Msg, Extra: me.Extra}
}

func parseProjectStage(pc *parseCtx, name string, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		if name == "$project" {
			return nil, mongoerr.Newf(mongoerr.Code(15969), "$project specification must be an object")
		}
		return nil, mongoerr.Newf(mongoerr.Code(40272), "%s specification stage must be an object, got %s", name, typeName(spec))
	}
	p, err := parseProjection(pc, doc, name != "$project")
	if err != nil {
		return nil, wrapStageErr(name, err)
	}
	return &stageAddFields{stageName: name, spec: doc, proj: p}, nil
}

// parseUnset parses $unset: a field name or an array of them (31119,
// 31120), run as an exclusion projection.
func parseUnset(pc *parseCtx, spec bson.RawValue) (stage, error) {
	var names []string
	switch spec.Type {
	case bson.TypeString:
		names = []string{spec.StringValue()}
	case bson.TypeArray:
		for _, v := range expr.Values(spec) {
			if v.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.Code(31120), "$unset specification must be a string or an array containing only string values")
			}
			names = append(names, v.StringValue())
		}
	default:
		return nil, mongoerr.New(mongoerr.Code(31119), "$unset specification must be a string or an array")
	}
	if len(names) == 0 {
		return nil, mongoerr.New(mongoerr.Code(31119), "$unset specification must be a string or an array with at least one field")
	}
	b := expr.NewDocBuilder()
	for _, n := range names {
		b.Append(n, expr.Int32(0))
	}
	doc := b.Doc()
	p := &projection{root: newBranch(), mode: modeExclusion}
	idSet := false
	elems, _ := doc.Elements()
	if err := p.parseLevel(pc, doc, elems, "", &idSet); err != nil {
		return nil, wrapStageErr("$unset", err)
	}
	p.mode = modeExclusion
	return &stageAddFields{stageName: "$unset", spec: doc, proj: p}, nil
}

func (s *stageAddFields) name() string { return s.stageName }

func (s *stageAddFields) explain() bson.D {
	name := s.stageName
	if name == "$set" {
		name = "$addFields"
	}
	if name == "$unset" {
		name = "$project"
	}
	if name == "$addFields" && len(mustElems(s.spec)) > 0 {
		// Each field is an expression: constants print as {$const: v}.
		if v := explainExpr(expr.Doc(s.spec), 0); v.Type == bson.TypeEmbeddedDocument {
			return bson.D{{Key: name, Value: v.Document()}}
		}
	}
	return bson.D{{Key: name, Value: s.spec}}
}

func (s *stageAddFields) deps(d *depSet) bool {
	switch s.proj.mode {
	case modeInclusion:
		if s.proj.deps.Whole {
			d.whole = true
			return false
		}
		d.add(s.proj.deps.Paths...)
		for _, k := range leafPaths(s.proj.root, "") {
			d.add(k)
		}
		return true
	case modeAddFields:
		d.addExpr(&s.proj.deps)
		return false
	}
	d.whole = true
	return false
}

// leafPaths lists the dotted paths an inclusion includes as they are.
func leafPaths(n *pnode, prefix string) []string {
	var out []string
	for _, k := range n.names {
		kid := n.kids[k]
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		switch kid.kind {
		case pInclude:
			out = append(out, p)
		case pBranch:
			out = append(out, leafPaths(kid, p)...)
		}
	}
	return out
}

// blocksMatch reports whether a $match reading path must stay after
// this stage: for $addFields/$set/$unset and exclusions, when path shares
// its top-level field with one they change; for an inclusion, unless
// path's top-level field is included unchanged.
func (s *stageAddFields) blocksMatch(path string) bool {
	head, _, _ := strings.Cut(path, ".")
	if s.proj.mode == modeInclusion {
		k := s.proj.root.kids[head]
		return k == nil || k.kind != pInclude
	}
	return s.proj.changedTop()[head]
}

func (s *stageAddFields) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		d, err := in.Next(ctx)
		if err != nil || d == nil {
			return nil, err
		}
		return s.proj.apply(c, d)
	}, close: in.Close}, nil
}
