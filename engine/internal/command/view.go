package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// viewDef is a view: a pipeline run over another namespace (a
// collection or a view). Views live in the catalog as entries whose
// options hold viewOn and pipeline; they have no documents of their own.
type viewDef struct {
	ns       string
	viewOn   string // full namespace
	pipeline []bson.Raw
}

// view returns the view ns, or nil when ns is not a view.
func (e *Env) view(ns string) *viewDef {
	return viewOf(e.Store.Collection(ns))
}

// viewOf returns the view a catalog entry defines, or nil.
func viewOf(c *storage.Collection) *viewDef {
	if v := timeseriesView(c); v != nil {
		return v
	}
	if c == nil || len(c.Options) == 0 {
		return nil
	}
	on, err := c.Options.LookupErr("viewOn")
	if err != nil {
		return nil
	}
	v := &viewDef{ns: c.NS, viewOn: c.DB + "." + on.StringValue()}
	if arr, ok := c.Options.Lookup("pipeline").ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, s := range vals {
			if d, ok := s.DocumentOK(); ok {
				v.pipeline = append(v.pipeline, d)
			}
		}
	}
	return v
}

// errOnView is mongod's answer to a command a view does not support.
func errOnView(cmd, ns string) error {
	return mongoerr.Newf(mongoerr.CommandNotSupportedOnView, "Namespace %s is a view, not a collection", ns)
}

// notOnView fails with CommandNotSupportedOnView (166) when ns is a view.
func (e *Env) notOnView(cmd, ns string) error {
	if tsCommands[cmd] && e.tsColl(ns) != nil {
		return nil
	}
	if e.view(ns) != nil {
		return errOnView(cmd, ns)
	}
	return nil
}

// viewOptions validates a view definition (create with viewOn) and
// returns the catalog options that hold it: viewOn and pipeline. The
// pipeline must parse and may not write ($out, $merge); a view cannot
// carry collection options.
// https://www.mongodb.com/docs/v7.0/reference/command/create/#std-label-create-view
func (r *Request) viewOptions(name, viewOn string, pipeline []bson.Raw, other bson.D) (bson.D, error) {
	if viewOn == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "'viewOn' cannot be empty")
	}
	other, viewColl := splitViewCollation(other)
	if len(other) > 0 {
		return nil, mongoerr.Newf(mongoerr.InvalidOptions, "option '%s' is not supported when creating a view", other[0].Key)
	}
	if err := validCollName(r.DB, viewOn); err != nil {
		return nil, err
	}
	// A view may not reach itself through the views it is defined on.
	next := r.DB + "." + viewOn
	for range maxViewDepth {
		if next == r.DB+"."+name {
			return nil, mongoerr.Newf(mongoerr.GraphContainsCycle, "View cycle detected: %s", r.DB+"."+name)
		}
		v := r.Env.view(next)
		if v == nil {
			break
		}
		next = v.viewOn
	}
	pl, err := agg.Parse(pipeline, agg.Options{DB: r.DB, Coll: viewOn, Now: r.start})
	if err != nil {
		return nil, err
	}
	if _, writes := pl.Writes(); writes {
		return nil, mongoerr.New(mongoerr.OptionNotSupportedOnView, "$out and $merge stages are not allowed in a view definition")
	}
	arr := bson.A{}
	for _, s := range pipeline {
		arr = append(arr, s)
	}
	return append(bson.D{{Key: "viewOn", Value: viewOn}, {Key: "pipeline", Value: arr}}, viewColl...), nil
}
