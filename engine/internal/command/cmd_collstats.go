package command

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("collStats", &spec{run: runCollStats, help: "collection statistics"})
	register("validate", &spec{run: runValidate, help: "check a collection's documents and indexes"})
}

// runCollStats reports a collection's sizes, divided by scale. Sizes are
// the bytes of documents and index entries as stored, before Pebble's
// compression.
// https://www.mongodb.com/docs/manual/reference/command/collStats/
func runCollStats(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	scale := int64(1)
	err = fields("collStats", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "scale":
			n, ok := asInt(v)
			if !ok || n < 1 {
				return mongoerr.New(mongoerr.BadValue, "scale has to be >= 1")
			}
			scale = n
		case "verbose":
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	if ts := r.Env.tsColl(ns); ts != nil {
		return r.Env.timeseriesStats(ts, scale)
	}
	c := r.Env.Store.Collection(ns)
	if c == nil {
		return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "Collection [%s] not found.", ns)
	}
	return r.Env.storageStats(c, scale)
}

// storageStats returns collStats' figures for c divided by scale, the
// storageStats document of $collStats.
func (e *Env) storageStats(c *storage.Collection, scale int64) (bson.D, error) {
	snap := e.Store.Snapshot()
	defer snap.Close()
	st, err := storage.CollStats(snap, c)
	if err != nil {
		return nil, err
	}
	var total int64
	sizes := bson.D{}
	for _, ix := range c.Indexes {
		n := st.IndexSizes[ix.Name]
		total += n
		sizes = append(sizes, bson.E{Key: ix.Name, Value: n / scale})
	}
	avg := int64(0)
	if st.Count > 0 {
		avg = st.Size / st.Count
	}
	return bson.D{
		{Key: "ns", Value: c.NS},
		{Key: "size", Value: st.Size / scale},
		{Key: "count", Value: st.Count},
		{Key: "avgObjSize", Value: avg},
		{Key: "numOrphanDocs", Value: int32(0)},
		{Key: "storageSize", Value: st.Size / scale},
		{Key: "freeStorageSize", Value: int64(0)},
		{Key: "capped", Value: false},
		{Key: "nindexes", Value: int32(len(c.Indexes))},
		{Key: "indexBuilds", Value: bson.A{}},
		{Key: "totalIndexSize", Value: total / scale},
		{Key: "totalSize", Value: (st.Size + total) / scale},
		{Key: "indexSizes", Value: sizes},
		{Key: "scaleFactor", Value: int32(scale)},
	}, nil
}

// runValidate checks every document is valid BSON and every index holds
// exactly the entries its documents generate.
// https://www.mongodb.com/docs/manual/reference/command/validate/
func runValidate(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	err = fields("validate", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "full", "repair", "background", "enforceFastCount", "checkBSONConformance", "metadata":
			if on, _ := asBool(v); on && k == "repair" {
				return mongoerr.New(mongoerr.NotImplemented, "validate with repair is not supported")
			}
			return nil
		}
		return errUnknown
	})
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	c := r.Env.Store.Collection(ns)
	if c == nil {
		return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "Collection '%s' does not exist to validate.", ns)
	}
	snap := r.Env.Store.Snapshot()
	defer snap.Close()
	want := make([]map[string][]int64, len(c.Indexes))
	for i := range want {
		want[i] = map[string][]int64{}
	}
	var nrecords, invalid int64
	var errs bson.A
	recs, err := snap.Scan(c, false)
	if err != nil {
		return nil, err
	}
	for recs.Next() {
		nrecords++
		doc, err := recs.Doc()
		if err == nil {
			err = bsonkit.Validate(doc)
		}
		if err != nil {
			invalid++
			errs = append(errs, fmt.Sprintf("record %d is not valid BSON: %v", recs.RecordID(), err))
			continue
		}
		for i, ix := range c.Indexes {
			keys, _, err := ix.Def.Keys(doc)
			if err != nil {
				errs = append(errs, fmt.Sprintf("record %d cannot be indexed by %s: %v", recs.RecordID(), ix.Name, err))
				continue
			}
			for _, k := range keys {
				want[i][string(k)] = append(want[i][string(k)], recs.RecordID())
			}
		}
	}
	recs.Close()
	var extra, missing int64
	keysPer := bson.D{}
	details := bson.D{}
	for i, ix := range c.Indexes {
		have, err := storage.IndexEntries(snap, c, ix)
		if err != nil {
			return nil, err
		}
		var n int64
		for k, rids := range have {
			n += int64(len(rids))
			for _, rid := range rids {
				if !slices.Contains(want[i][k], rid) {
					extra++
				}
			}
		}
		for k, rids := range want[i] {
			for _, rid := range rids {
				if !slices.Contains(have[k], rid) {
					missing++
				}
			}
		}
		keysPer = append(keysPer, bson.E{Key: ix.Name, Value: n})
		details = append(details, bson.E{Key: ix.Name, Value: bson.D{{Key: "valid", Value: true}}})
	}
	if extra > 0 {
		errs = append(errs, fmt.Sprintf("%d index entries do not match a document", extra))
	}
	if missing > 0 {
		errs = append(errs, fmt.Sprintf("%d index entries are missing", missing))
	}
	if errs == nil {
		errs = bson.A{}
	}
	return bson.D{
		{Key: "ns", Value: ns},
		{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}},
		{Key: "nInvalidDocuments", Value: invalid},
		{Key: "nNonCompliantDocuments", Value: int64(0)},
		{Key: "nrecords", Value: nrecords},
		{Key: "nIndexes", Value: int32(len(c.Indexes))},
		{Key: "keysPerIndex", Value: keysPer},
		{Key: "indexDetails", Value: details},
		{Key: "valid", Value: len(errs) == 0},
		{Key: "repaired", Value: false},
		{Key: "warnings", Value: bson.A{}},
		{Key: "errors", Value: errs},
		{Key: "extraIndexEntries", Value: bson.A{}},
		{Key: "missingIndexEntries", Value: bson.A{}},
		{Key: "corruptRecords", Value: bson.A{}},
	}, nil
}
