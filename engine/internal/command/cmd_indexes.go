package command

import (
	"bytes"
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("createIndexes", &spec{run: runCreateIndexes, apiV1: true, help: "create indexes"})
	register("listIndexes", &spec{run: runListIndexes, apiV1: true, help: "list a collection's indexes"})
	register("dropIndexes", &spec{run: runDropIndexes, apiV1: true, help: "drop indexes"})
}

// maxIndexes is the most indexes a collection may have, _id included.
const maxIndexes = 64

// runCreateIndexes builds indexes on existing data, creating the collection
// when needed. Re-creating an identical index is a no-op; a conflicting one
// fails with IndexOptionsConflict or IndexKeySpecsConflict.
// https://www.mongodb.com/docs/manual/reference/command/createIndexes/
func runCreateIndexes(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	if err := r.Env.notOnView(r.Name, r.DB+"."+name); err != nil {
		return nil, err
	}
	if ts := r.Env.tsColl(r.DB + "." + name); ts != nil {
		return r.createTimeseriesIndexes(ctx, ts)
	}
	if err := checkWritable(r.DB, name); err != nil {
		return nil, err
	}
	if err := checkDBCase(r.Env.Store, r.DB); err != nil {
		return nil, err
	}
	raws, err := createIndexesSpecs(r)
	if err != nil {
		return nil, err
	}
	specs := make([]index.Spec, len(raws))
	for i, raw := range raws {
		sp, err := index.ParseSpec(raw)
		if err != nil {
			return nil, err
		}
		if sp.Name == "" {
			return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'createIndexes.indexes.name' is missing but a required field")
		}
		specs[i] = sp
	}
	ns := r.DB + "." + name
	if err := r.txnCreateIndexAllowed(ns); err != nil {
		return nil, err
	}
	var before, after int
	var created bool
	if r.txn != nil {
		before, after, created, err = createIndexesInTxn(r, ns, specs)
	} else {
		before, after, created, err = runIndexBuild(ctx, r, ns, specs)
	}
	if err != nil {
		return nil, err
	}
	reply := bson.D{{Key: "numIndexesBefore", Value: int32(before)}, {Key: "numIndexesAfter", Value: int32(after)}}
	if created {
		reply = append(reply, bson.E{Key: "createdCollectionAutomatically", Value: true})
	} else {
		reply = append(reply, bson.E{Key: "createdCollectionAutomatically", Value: false})
	}
	if before == after {
		reply = append(reply, bson.E{Key: "note", Value: "all indexes already exist"})
	}
	return reply, nil
}

// indexConflict compares a requested index with the existing ones: it
// reports exists=true for an identical index and MongoDB's errors for a
// name or key clash with different options.
func indexConflict(c *storage.Collection, sp index.Spec) (exists bool, err error) {
	want := sp.Doc()
	for _, ix := range c.Indexes {
		have := ix.Def.Spec()
		sameKey := sameKey(have.Key, sp.Key)
		samePartial := bytes.Equal(have.PartialFilterExpression, sp.PartialFilterExpression) && bytes.Equal(have.Collation, sp.Collation)
		switch {
		case have.Name == sp.Name && sameKey && sameOptions(have, sp):
			return true, nil
		case have.Name == sp.Name && sameKey:
			return false, mongoerr.Newf(mongoerr.IndexOptionsConflict, "An equivalent index already exists with the same name but different options. Requested index: %s, existing index: %s", formatDoc(want), formatDoc(ix.Spec))
		case have.Name == sp.Name:
			return false, mongoerr.Newf(mongoerr.IndexKeySpecsConflict, "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s", formatDoc(want), formatDoc(ix.Spec))
		case sameKey && samePartial:
			return false, mongoerr.Newf(mongoerr.IndexOptionsConflict, "Index already exists with a different name: %s", have.Name)
		}
	}
	return false, nil
}

// sameOptions compares the options that distinguish two indexes.
func sameOptions(a, b index.Spec) bool {
	ttl := func(p *int32) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return a.Unique == b.Unique && a.Sparse == b.Sparse && a.Hidden == b.Hidden &&
		bytes.Equal(a.PartialFilterExpression, b.PartialFilterExpression) &&
		bytes.Equal(a.WildcardProjection, b.WildcardProjection) && bytes.Equal(a.Collation, b.Collation) &&
		ttl(a.ExpireAfterSeconds) == ttl(b.ExpireAfterSeconds)
}

func formatDoc(d bson.Raw) string {
	return formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d})
}

// runListIndexes returns a collection's index specs as a cursor.
// https://www.mongodb.com/docs/manual/reference/command/listIndexes/
func runListIndexes(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	if err := r.Env.notOnView(r.Name, r.DB+"."+name); err != nil {
		return nil, err
	}
	var batchSize int64 = defaultBatchSize
	err = fields("listIndexes", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "cursor":
			d, err := wantDoc("listIndexes", k, v)
			if err != nil {
				return err
			}
			if bs, e := d.LookupErr("batchSize"); e == nil {
				batchSize, err = wantNonNegative("listIndexes", "cursor.batchSize", bs)
			}
			return err
		case "includeBuildUUIDs", "includeIndexBuildInfo":
			_, err := wantBool("listIndexes", k, v)
			return err
		}
		return errUnknown
	})
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	if ts := r.Env.tsColl(ns); ts != nil {
		return r.listTimeseriesIndexes(ctx, ts, name, batchSize)
	}
	c := r.Env.Store.Collection(ns)
	if c == nil {
		return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
	}
	docs := make([]bson.Raw, len(c.Indexes))
	for i, ix := range c.Indexes {
		docs[i] = ix.Spec
	}
	return openCursor(ctx, r, r.DB+".$cmd.listIndexes."+name, &sliceSource{docs: docs}, batchSize, false)
}

// runDropIndexes drops indexes named by name, key pattern, a list of
// names, or "*" for every index but _id.
// https://www.mongodb.com/docs/manual/reference/command/dropIndexes/
func runDropIndexes(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	if err := r.Env.notOnView(r.Name, r.DB+"."+name); err != nil {
		return nil, err
	}
	var target bson.RawValue
	err = fields("dropIndexes", r.Body, func(k string, v bson.RawValue) error {
		if k == "index" {
			target = v
			return nil
		}
		return errUnknown
	})
	if err != nil {
		return nil, err
	}
	if target.Type == 0 {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'dropIndexes.index' is missing but a required field")
	}
	ns := r.DB + "." + name
	if ts := r.Env.tsColl(ns); ts != nil {
		if target, err = ts.dropTarget(target); err != nil {
			return nil, err
		}
		ns = ts.bucketsNS
	}
	was := 0
	if ns != r.DB+"."+name {
		was = -1 // the buckets' clustered _id is no index to mongod
	}
	var msg string
	err = r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "ns not found %s", ns)
		}
		was += len(c.Indexes)
		names, all, err := dropTargets(c, target)
		if err != nil {
			return err
		}
		if all {
			msg = "non-_id indexes dropped for collection"
		}
		for _, n := range names {
			if err := w.DropIndex(ns, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	reply := bson.D{{Key: "nIndexesWas", Value: int32(was)}}
	if msg != "" {
		reply = append(reply, bson.E{Key: "msg", Value: msg})
	}
	return reply, nil
}

// dropTargets resolves dropIndexes' index argument to index names.
func dropTargets(c *storage.Collection, v bson.RawValue) (names []string, all bool, err error) {
	byName := func(n string) error {
		if n == "_id_" {
			return mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
		}
		if c.IndexByName(n) == nil {
			return mongoerr.Newf(mongoerr.IndexNotFound, "index not found with name [%s]", n)
		}
		names = append(names, n)
		return nil
	}
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if s == "*" {
			for _, ix := range c.Indexes[1:] {
				names = append(names, ix.Name)
			}
			return names, true, nil
		}
		return names, false, byName(s)
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		for _, e := range vals {
			s, ok := e.StringValueOK()
			if !ok {
				return nil, false, mongoerr.New(mongoerr.TypeMismatch, "dropIndexes 'index' array entries must be strings")
			}
			if err := byName(s); err != nil {
				return nil, false, err
			}
		}
		return names, false, nil
	case bson.TypeEmbeddedDocument:
		key := v.Document()
		var found []string
		for _, ix := range c.Indexes {
			if sameKey(ix.Key(), key) {
				found = append(found, ix.Name)
			}
		}
		switch {
		case len(found) == 0:
			return nil, false, mongoerr.Newf(mongoerr.IndexNotFound, "can't find index with key: %s", formatDoc(key))
		case len(found) > 1:
			return nil, false, mongoerr.Newf(mongoerr.AmbiguousIndexKeyPattern, "%d indexes found for key: %s, identify by name instead. Conflicting indexes: %s", len(found), formatDoc(key), found)
		case found[0] == "_id_":
			return nil, false, mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
		}
		return found, false, nil
	}
	return nil, false, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'dropIndexes.index' is the wrong type '%s', expected types '[string, object, array]'", typeName(v.Type))
}

// createIndexesSpecs parses createIndexes' fields and returns its index
// specifications, at least one.
func createIndexesSpecs(r *Request) ([]bson.Raw, error) {
	var raws []bson.Raw
	have := false
	err := fields("createIndexes", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "indexes":
			raws, err = docArray("createIndexes", k, v)
			have = true
		case "commitQuorum":
			// One node: every quorum is met when the build commits.
		case "ignoreUnknownIndexOptions", "isTimeseriesNamespace":
			_, err = wantBool("createIndexes", k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !have {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'createIndexes.indexes' is missing but a required field")
	}
	if len(raws) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	return raws, nil
}
