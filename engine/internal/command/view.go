package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

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
	if e.view(ns) != nil {
		return errOnView(cmd, ns)
	}
	return nil
}
