package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("replSetResizeOplog", &spec{run: runResizeOplog, adminOnly: true, help: "change the oplog's size cap"})
}

// runResizeOplog changes the size cap of local.oplog.rs: size in
// megabytes, from 990 to 1 PB, and minRetentionHours, the hours an entry
// is kept even past the size cap (0: none), until the store is closed, as
// mongod's (storage.oplogMinRetentionHours, here
// engine.Options.OplogMinRetentionHours, is the value at startup). The
// oplog shrinks in the background.
// https://www.mongodb.com/docs/v7.0/reference/command/replSetResizeOplog/
func runResizeOplog(ctx context.Context, r *Request) (bson.D, error) {
	var size, hours float64
	haveSize, haveRet := false, false
	err := fields("replSetResizeOplog", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "size":
			f, ok := asFloat(v)
			if !ok {
				return mongoerr.FieldType("replSetResizeOplog", k, typeName(v.Type), "double")
			}
			size, haveSize = f, true
		case "minRetentionHours":
			f, ok := asFloat(v)
			if !ok {
				return mongoerr.FieldType("replSetResizeOplog", k, typeName(v.Type), "double")
			}
			if f < 0 {
				return mongoerr.New(mongoerr.BadValue, "minRetentionHours must be >= 0")
			}
			hours, haveRet = f, true
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !haveSize && !haveRet {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "replSetResizeOplog expects 'size' and/or 'minRetentionHours' to be specified")
	}
	if haveSize {
		if size < 990 {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "oplog size should be 990MB at least")
		}
		if size > 1024*1024*1024 {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "oplog size in MB cannot exceed maximum of 1PB")
		}
		r.Env.Store.SetOplogSize(int64(size * 1024 * 1024))
	}
	if haveRet {
		r.Env.Store.SetOplogMinRetention(time.Duration(hours * float64(time.Hour)))
	}
	return bson.D{}, nil
}
