package command

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// errLetField is mongod's answer to a command let expression that reads
// a document field.
const errLetField = mongoerr.Code(4890500)

// evalLet evaluates a command's let document once, in order (a variable
// may use those defined before it), with the command's $$NOW and
// $$CLUSTER_TIME, and returns the variables as a document of constants.
// cmd names the command in error messages.
// https://www.mongodb.com/docs/v7.0/reference/command/find/#std-label-find-let-syntax
func evalLet(cmd string, v bson.RawValue, env match.Env) (bson.Raw, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.FieldType(cmd, "let", typeName(v.Type), "object")
	}
	elems, err := d.Elements()
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid let document: %v", err)
	}
	sc := expr.NewScope()
	sc.SetCollation(env.Collation) // constant operands fold at parse time
	c := expr.NewCtx(sc)
	c.Now, c.ClusterTime = env.Now, env.ClusterTime
	out := expr.NewDocBuilder()
	for _, e := range elems {
		name := e.Key()
		if err := expr.ValidateVarName(name); err != nil {
			return nil, err
		}
		var deps expr.Deps
		x, err := expr.ParseDeps(e.Value(), sc, &deps)
		if err != nil {
			return nil, err
		}
		if len(deps.Paths) > 0 || deps.Whole {
			return nil, mongoerr.New(errLetField, "Command let Expression tried to access a field, but this is not allowed because command let expressions run before the query examines any documents.")
		}
		val, err := x.Eval(c)
		if err != nil {
			return nil, err
		}
		c.Set(sc.Define(name), val)
		if val.Type != 0 {
			out.Append(name, val)
		}
	}
	return out.Doc(), nil
}

// matchEnv returns what the filters of r read besides the document: let
// (evaluated, nil for none) and the command's $$NOW and $$CLUSTER_TIME.
func (r *Request) matchEnv(let bson.Raw) match.Env {
	now := r.start
	if now.IsZero() {
		now = time.Now()
	}
	return match.Env{Let: let, Now: now, ClusterTime: r.Env.clock.current()}
}

// parseLet evaluates a command's let field for r, under the simple
// collation; r keeps it for letWithCollation.
func (r *Request) parseLet(cmd string, v bson.RawValue) (bson.Raw, error) {
	r.letSpec = v
	return evalLet(cmd, v, r.matchEnv(nil))
}

// letWithCollation returns the command's let evaluated under coll, as
// mongod seeds let variables in the operation's expression context, which
// carries its collation: let itself under the simple collation (nil) or
// when the command has none.
// https://www.mongodb.com/docs/v7.0/reference/command/find/#std-label-find-let-syntax
func (r *Request) letWithCollation(let bson.Raw, coll *collation.Collator) (bson.Raw, error) {
	if coll == nil || r.letSpec.Type == 0 {
		return let, nil
	}
	env := r.matchEnv(nil)
	env.Collation = coll
	return evalLet(r.Name, r.letSpec, env)
}

// mergeLet returns let with the statement constants c added (a constant
// shadows a let variable of the same name).
func mergeLet(let, c bson.Raw) bson.Raw {
	out := expr.NewDocBuilder()
	seen := map[string]bool{}
	if elems, err := c.Elements(); err == nil {
		for _, e := range elems {
			seen[e.Key()] = true
		}
	}
	if elems, err := let.Elements(); err == nil {
		for _, e := range elems {
			if !seen[e.Key()] {
				out.Append(e.Key(), e.Value())
			}
		}
	}
	if elems, err := c.Elements(); err == nil {
		for _, e := range elems {
			out.Append(e.Key(), e.Value())
		}
	}
	return out.Doc()
}
