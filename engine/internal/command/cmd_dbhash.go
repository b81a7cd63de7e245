package command

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"hash"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("dbHash", &spec{run: runDBHash, help: "md5 of every collection of a database"})
	aliases["dbhash"] = "dbHash"
}

// runDBHash hashes each collection of the database, as mongod's dbHash:
// the md5 of its documents' bytes in _id order, and an overall md5 of the
// per-collection hex digests in collection name order. The collections
// option limits the collections hashed; system.profile, whose writes are
// not replicated, is skipped as mongod skips it.
//
// The reply is {host, collections: {name: md5}, capped: [], uuids: {name:
// UUID}, md5, timeMillis}.
// https://www.mongodb.com/docs/v7.0/reference/command/dbHash/
func runDBHash(ctx context.Context, r *Request) (bson.D, error) {
	start := time.Now()
	var want map[string]bool
	err := fields("dbHash", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "collections":
			arr, ok := v.ArrayOK()
			if !ok {
				// mongod ignores a collections field that is not an array.
				return nil
			}
			want = map[string]bool{}
			vals, _ := arr.Values()
			for _, x := range vals {
				s, ok := x.StringValueOK()
				if !ok {
					return mongoerr.New(mongoerr.BadValue, "collections entries have to be strings")
				}
				want[s] = true
			}
		case "$_internalReadAtClusterTime":
			return mongoerr.New(mongoerr.InvalidOptions, "The '$_internalReadAtClusterTime' option is only supported when testing commands are enabled")
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
	colls := r.Env.Store.Collections(r.DB)
	sort.Slice(colls, func(i, j int) bool { return colls[i].Name < colls[j].Name })
	hashes, uuids := bson.D{}, bson.D{}
	overall := md5.New()
	for _, c := range colls {
		if c.Name == "system.profile" || strings.HasPrefix(c.Name, "tmp.mr.") || want != nil && !want[c.Name] {
			continue
		}
		sum, err := hashCollection(ctx, snap, c)
		if err != nil {
			return nil, err
		}
		hashes = append(hashes, bson.E{Key: c.Name, Value: sum})
		uuids = append(uuids, bson.E{Key: c.Name, Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: append([]byte(nil), c.UUID[:]...)}})
		overall.Write([]byte(sum))
	}
	return bson.D{
		{Key: "host", Value: r.Env.Config.Host},
		{Key: "collections", Value: hashes},
		{Key: "capped", Value: bson.A{}},
		{Key: "uuids", Value: uuids},
		{Key: "md5", Value: hex.EncodeToString(overall.Sum(nil))},
		{Key: "timeMillis", Value: appendNumber(time.Since(start).Milliseconds())},
	}, nil
}

// hashCollection returns the hex md5 of c's documents in _id index order,
// or mongod's "no _id _index" when the collection has none.
func hashCollection(ctx context.Context, rd storage.Reader, c *storage.Collection) (string, error) {
	id := c.IndexByName("_id_")
	if id == nil {
		return "no _id _index", nil
	}
	h := md5.New()
	es, err := rd.IndexScan(c, id, nil, nil, false)
	if err != nil {
		return "", err
	}
	defer es.Close()
	if err := hashEntries(ctx, rd, c, es, h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashEntries feeds the documents the entries point at into h.
func hashEntries(ctx context.Context, rd storage.Reader, c *storage.Collection, es *storage.Entries, h hash.Hash) error {
	for n := 0; es.Next(); n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return ctxErr(err)
			}
		}
		rid, err := es.RecordID()
		if err != nil {
			return err
		}
		doc, err := rd.Fetch(c, rid)
		if err != nil {
			return err
		}
		h.Write(doc)
	}
	return es.Err()
}

// appendNumber types n as mongod's BSONObjBuilder::appendNumber does: an
// int32 within ±2^30, an int64 beyond.
func appendNumber(n int64) any {
	if n > -(1<<30) && n < 1<<30 {
		return int32(n)
	}
	return n
}
