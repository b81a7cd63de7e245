package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("compact", &spec{run: runCompact, help: "compact a collection's data and indexes on disk"})
}

// runCompact compacts the storage key ranges of one collection (its
// documents and index entries) and reports bytesFreed. As mongod 7.0, a
// replica set primary runs it only with force: true; reads and writes
// continue meanwhile.
// https://www.mongodb.com/docs/v7.0/reference/command/compact/
func runCompact(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	force := false
	if err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		if k != "force" {
			return errUnknown
		}
		b, ok := asBool(v)
		if !ok {
			return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'compact.force' is the wrong type '%s', expected types '[bool, long, int, decimal, double']", typeName(v.Type))
		}
		force = b
		return nil
	}); err != nil {
		return nil, err
	}
	e := r.Env
	if !e.Config.Standalone && !force {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "will not run compact on an active replica set primary as this is a slow blocking operation. use force:true to force")
	}
	c := e.Store.Collection(r.DB + "." + name)
	if viewOf(c) != nil {
		return nil, mongoerr.New(mongoerr.CommandNotSupportedOnView, "can't compact a view")
	}
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "collection does not exist")
	}
	freed, err := e.Store.CompactCollection(ctx, c)
	if err != nil {
		return nil, err
	}
	return bson.D{{Key: "bytesFreed", Value: freed}}, nil
}
