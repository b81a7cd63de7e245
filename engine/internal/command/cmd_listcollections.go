package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("listCollections", &spec{run: runListCollections, apiV1: true, help: "list the collections of a database"})
	register("listDatabases", &spec{run: runListDatabases, adminOnly: true, apiV1: true, help: "list databases"})
}

// runListCollections lists collections with their options as a cursor.
// https://www.mongodb.com/docs/manual/reference/command/listCollections/
func runListCollections(ctx context.Context, r *Request) (bson.D, error) {
	var (
		filter    bson.Raw
		nameOnly  bool
		batchSize int64 = defaultBatchSize
	)
	err := fields("listCollections", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "filter":
			filter, err = wantDoc("listCollections", k, v)
		case "nameOnly":
			nameOnly, err = wantBool("listCollections", k, v)
		case "authorizedCollections":
			// Authorization is not enforced, so every collection is authorized.
			_, err = wantBool("listCollections", k, v)
		case "cursor":
			var d bson.Raw
			if d, err = wantDoc("listCollections", k, v); err == nil {
				if bs, e := d.LookupErr("batchSize"); e == nil {
					batchSize, err = wantNonNegative("listCollections", "cursor.batchSize", bs)
				}
			}
		case "includePendingDrops":
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	f, err := match.Compile(orEmpty(filter))
	if err != nil {
		return nil, err
	}
	var docs []bson.Raw
	for _, c := range r.Env.Store.Collections(r.DB) {
		d := collectionInfo(c, nameOnly)
		if f.Match(d) {
			docs = append(docs, d)
		}
	}
	return openCursor(ctx, r, r.DB+".$cmd.listCollections", &sliceSource{docs: docs}, batchSize, false)
}

func collectionInfo(c *storage.Collection, nameOnly bool) bson.Raw {
	if d, ok := timeseriesInfo(c, nameOnly); ok {
		return d
	}
	if viewOf(c) != nil {
		d := bson.D{{Key: "name", Value: c.Name}, {Key: "type", Value: "view"}}
		if !nameOnly {
			d = append(d, bson.E{Key: "options", Value: c.Options}, bson.E{Key: "info", Value: bson.D{{Key: "readOnly", Value: true}}})
		}
		b, _ := bson.Marshal(d)
		return b
	}
	d := bson.D{{Key: "name", Value: c.Name}, {Key: "type", Value: "collection"}}
	if !nameOnly {
		d = append(d,
			bson.E{Key: "options", Value: c.Options},
			bson.E{Key: "info", Value: bson.D{
				{Key: "readOnly", Value: false},
				{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}},
			}},
			bson.E{Key: "idIndex", Value: idIndexDoc(c)})
	}
	b, _ := bson.Marshal(d)
	return b
}

func orEmpty(d bson.Raw) bson.Raw {
	if d == nil {
		return bson.Raw{5, 0, 0, 0, 0}
	}
	return d
}

// sliceSource serves documents computed up front.
type sliceSource struct {
	docs []bson.Raw
	i    int
}

func (s *sliceSource) Next(context.Context) (bson.Raw, error) {
	if s.i >= len(s.docs) {
		return nil, nil
	}
	s.i++
	return s.docs[s.i-1], nil
}

func (s *sliceSource) Close() {}

// runListDatabases lists databases with their sizes.
// https://www.mongodb.com/docs/manual/reference/command/listDatabases/
func runListDatabases(ctx context.Context, r *Request) (bson.D, error) {
	var (
		filter   bson.Raw
		nameOnly bool
	)
	err := fields("listDatabases", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "filter":
			filter, err = wantDoc("listDatabases", k, v)
		case "nameOnly":
			nameOnly, err = wantBool("listDatabases", k, v)
		case "authorizedDatabases":
			_, err = wantBool("listDatabases", k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	f, err := match.Compile(orEmpty(filter))
	if err != nil {
		return nil, err
	}
	snap := r.Env.Store.Snapshot()
	defer snap.Close()
	dbs := bson.A{}
	var total int64
	for _, db := range r.Env.Store.Databases() {
		var size int64
		for _, c := range r.Env.Store.Collections(db) {
			st, err := storage.CollStats(snap, c)
			if err != nil {
				return nil, err
			}
			size += st.Size
			for _, n := range st.IndexSizes {
				size += n
			}
		}
		d := bson.D{{Key: "name", Value: db}}
		if !nameOnly {
			d = append(d, bson.E{Key: "sizeOnDisk", Value: size}, bson.E{Key: "empty", Value: false})
		}
		raw, _ := bson.Marshal(d)
		if !f.Match(raw) {
			continue
		}
		total += size
		dbs = append(dbs, bson.Raw(raw))
	}
	if nameOnly {
		return bson.D{{Key: "databases", Value: dbs}}, nil
	}
	return bson.D{{Key: "databases", Value: dbs}, {Key: "totalSize", Value: total}, {Key: "totalSizeMb", Value: total / (1 << 20)}}, nil
}
