package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("create", &spec{run: runCreate, apiV1: true, help: "create a collection"})
}

// runCreate creates a collection with options, which listCollections
// reports back. Options whose behaviour the engine does not have yet
// (capped, time series, views, clustered) answer
// NotImplemented rather than being stored and ignored.
// validator, validationLevel and validationAction are validation.go's.
// https://www.mongodb.com/docs/manual/reference/command/create/
func runCreate(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	if err := checkWritable(r.DB, name); err != nil {
		return nil, err
	}
	var (
		opts               bson.D
		viewOn             string
		pipeline           []bson.Raw
		haveView, havePipe bool
		tsVal, tsExpire    *bson.RawValue
	)
	if err := r.checkTimeseriesCreate(name); err != nil {
		return nil, err
	}
	err = fields("create", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "storageEngine", "indexOptionDefaults":
			if _, err := wantDoc("create", k, v); err != nil {
				return err
			}
			opts = append(opts, bson.E{Key: k, Value: v})
		case "idIndex":
			d, err := wantDoc("create", k, v)
			if err != nil {
				return err
			}
			if key, err := d.LookupErr("key"); err != nil || !sameKey(key.Document(), storage.IDIndexSpec.Lookup("key").Document()) {
				return mongoerr.New(mongoerr.BadValue, "The field 'key' for an _id index must be {_id: 1}, but got "+d.String())
			}
		case "collation":
			var err error
			if opts, err = createCollationOption(opts, v); err != nil {
				return err
			}
		case "changeStreamPreAndPostImages":
			if _, err := parsePreAndPostImages("create", v); err != nil {
				return err
			}
			opts = append(opts, bson.E{Key: k, Value: v})
		case "capped":
			if on, err := wantBool("create", k, v); err != nil || !on {
				return err
			}
			return mongoerr.New(mongoerr.NotImplemented, "capped collections are not supported yet")
		case "size", "max":
			return mongoerr.Newf(mongoerr.NotImplemented, "'%s' applies to capped collections, which are not supported yet", k)
		case "validator", "validationLevel", "validationAction":
			e, err := parseValidationOption("create", r.DB+"."+name, k, v)
			if err == nil && e != nil {
				opts = append(opts, *e)
			}
			return err
		case "timeseries", "expireAfterSeconds":
			tsVal, tsExpire = tsOption(k, v, tsVal, tsExpire)
		case "viewOn":
			s, err := wantString("create", k, v)
			if err != nil {
				return err
			}
			viewOn, haveView = s, true
		case "pipeline":
			stages, err := docArray("create", k, v)
			if err != nil {
				return err
			}
			pipeline, havePipe = stages, true
		case "clusteredIndex":
			return mongoerr.New(mongoerr.NotImplemented, "clustered collections are not supported yet")
		case "encryptedFields":
			return mongoerr.New(mongoerr.NotImplemented, "queryable encryption is not supported")
		case "autoIndexId":
			// Deprecated but accepted by mongod 7.0; every collection
			// here has its _id index.
			b, err := wantBool("create", k, v)
			if err != nil {
				return err
			}
			if !b {
				return mongoerr.New(mongoerr.NotImplemented, "collections without an _id index (autoIndexId: false) are not supported")
			}
		case "temp", "flags":
			return mongoerr.UnknownField("create", k)
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if tsVal != nil || tsExpire != nil {
		return r.createTimeseriesOrFail(name, tsVal, tsExpire)
	}
	if havePipe && !haveView {
		return nil, mongoerr.New(mongoerr.BadValue, "'pipeline' requires 'viewOn' to also be specified")
	}
	if haveView {
		if opts, err = r.viewOptions(name, viewOn, pipeline, opts); err != nil {
			return nil, err
		}
	}
	var raw bson.Raw
	if len(opts) > 0 {
		if raw, err = bson.Marshal(opts); err != nil {
			return nil, err
		}
	}
	if err := checkDBCase(r.Env.Store, r.DB); err != nil {
		return nil, err
	}
	err = r.write(ctx, func(w *storage.Writer) error {
		_, err := w.CreateCollection(r.DB+"."+name, raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}
