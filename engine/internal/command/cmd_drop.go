package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("drop", &spec{run: runDrop, apiV1: true, help: "drop a collection"})
	register("dropDatabase", &spec{run: runDropDatabase, apiV1: true, help: "drop a database"})
	register("renameCollection", &spec{run: runRename, adminOnly: true, help: "rename a collection"})
}

// runDrop drops a collection. Since 7.0 dropping a missing collection
// succeeds.
// https://www.mongodb.com/docs/manual/reference/command/drop/
func runDrop(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	err = fields("drop", r.Body, func(k string, v bson.RawValue) error { return errUnknown })
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	var reply bson.D
	err = r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			return nil
		}
		reply = bson.D{{Key: "nIndexesWas", Value: int32(len(c.Indexes))}, {Key: "ns", Value: ns}}
		if err := dropTimeseriesBuckets(w, c); err != nil {
			return err
		}
		return w.DropCollection(ns)
	})
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// runDropDatabase drops every collection of the database.
// https://www.mongodb.com/docs/manual/reference/command/dropDatabase/
func runDropDatabase(ctx context.Context, r *Request) (bson.D, error) {
	err := fields("dropDatabase", r.Body, func(k string, v bson.RawValue) error { return errUnknown })
	if err != nil {
		return nil, err
	}
	if r.DB == "local" || r.DB == "config" || r.DB == "admin" {
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "Dropping the '%s' database is prohibited.", r.DB)
	}
	err = r.Env.Store.WriteExclusive(ctx, lockDB(r.DB), func(w *storage.Writer) error {
		for _, c := range r.Env.Store.Collections(r.DB) {
			if err := w.DropCollection(c.NS); err != nil {
				return err
			}
		}
		w.LogDropDatabase(r.DB)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bson.D{{Key: "dropped", Value: r.DB}}, nil
}

// runRename renames a collection, within or across databases.
// https://www.mongodb.com/docs/manual/reference/command/renameCollection/
func runRename(ctx context.Context, r *Request) (bson.D, error) {
	from, err := wantString("renameCollection", "renameCollection", r.Body.Index(0).Value())
	if err != nil {
		return nil, err
	}
	var (
		to         string
		haveTo     bool
		dropTarget bool
	)
	err = fields("renameCollection", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "to":
			to, err = wantString("renameCollection", k, v)
			haveTo = true
		case "dropTarget":
			dropTarget, err = wantBool("renameCollection", k, v)
		case "stayTemp":
			_, err = wantBool("renameCollection", k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !haveTo {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'renameCollection.to' is missing but a required field")
	}
	for _, ns := range []string{from, to} {
		db, coll := storage.SplitNS(ns)
		if err := validDBName(db); err != nil {
			return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", ns)
		}
		if err := validCollName(db, coll); err != nil {
			return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", ns)
		}
	}
	if from == to {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
	}
	if err := r.Env.checkRenameTimeseries(from, to); err != nil {
		return nil, err
	}
	if toDB, _ := storage.SplitNS(to); r.Env.Store.Collection(from) != nil {
		if err := checkDBCase(r.Env.Store, toDB); err != nil {
			return nil, err
		}
	}
	err = r.Env.Store.WriteExclusive(ctx, lockNS(from, to), func(w *storage.Writer) error {
		if w.Collection(from) == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "Source collection %s does not exist", from)
		}
		if w.Collection(to) != nil {
			if !dropTarget {
				return mongoerr.New(mongoerr.NamespaceExists, "target namespace exists")
			}
			if err := w.DropCollection(to); err != nil {
				return err
			}
		}
		return w.RenameCollection(from, to)
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}
