package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("dbStats", &spec{run: runDBStats, help: "database statistics"})
}

// runDBStats reports a database's object count and sizes, divided by scale.
// https://www.mongodb.com/docs/manual/reference/command/dbStats/
func runDBStats(ctx context.Context, r *Request) (bson.D, error) {
	scale := int64(1)
	err := fields("dbStats", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "scale":
			n, ok := asInt(v)
			if !ok {
				f, okf := asFloat(v)
				if !okf {
					return mongoerr.New(mongoerr.TypeMismatch, "scale has to be a number")
				}
				n = int64(f)
			}
			if n <= 0 {
				return mongoerr.New(mongoerr.BadValue, "Scale factor must be greater than zero")
			}
			scale = n
		case "freeStorage":
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	snap := r.Env.Store.Snapshot()
	defer snap.Close()
	var objects, dataSize, indexSize, indexes int64
	colls := r.Env.Store.Collections(r.DB)
	for _, c := range colls {
		st, err := storage.CollStats(snap, c)
		if err != nil {
			return nil, err
		}
		objects += st.Count
		dataSize += st.Size
		indexes += int64(len(c.Indexes))
		for _, n := range st.IndexSizes {
			indexSize += n
		}
	}
	avg := 0.0
	if objects > 0 {
		avg = float64(dataSize) / float64(objects)
	}
	return bson.D{
		{Key: "db", Value: r.DB},
		{Key: "collections", Value: int64(len(colls))},
		{Key: "views", Value: int64(0)},
		{Key: "objects", Value: objects},
		{Key: "avgObjSize", Value: avg},
		{Key: "dataSize", Value: float64(dataSize / scale)},
		{Key: "storageSize", Value: float64(dataSize / scale)},
		{Key: "indexes", Value: indexes},
		{Key: "indexSize", Value: float64(indexSize / scale)},
		{Key: "totalSize", Value: float64((dataSize + indexSize) / scale)},
		{Key: "scaleFactor", Value: scale},
		{Key: "fsUsedSize", Value: float64(0)},
		{Key: "fsTotalSize", Value: float64(0)},
	}, nil
}
