package advisor

import (
	"context"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// parseDecimal reads a decimal's string form as a float64.
func parseDecimal(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// collectCollection fills coll's statistics, indexes, usage and schema.
func collectCollection(ctx context.Context, c *conn, p *plan, snap *Snapshot, coll *Collection) {
	ns := coll.NS()
	if err := collectStats(ctx, c, coll); err != nil {
		snap.note("%s: $collStats: %v", ns, err)
	}
	if err := collectIndexes(ctx, c, coll); err != nil {
		snap.note("%s: listIndexes: %v", ns, err)
	}
	if err := collectIndexStats(ctx, c, coll); err != nil {
		snap.note("%s: $indexStats: %v", ns, err)
	} else {
		coll.IndexStats = true
	}
	if coll.Count == 0 && coll.Size == 0 {
		return
	}
	s, err := collectSchema(ctx, c, p, snap, coll)
	if err != nil {
		snap.note("%s: schema sample: %v", ns, err)
		return
	}
	coll.Schema = s
}

// collectStats reads $collStats storageStats.
func collectStats(ctx context.Context, c *conn, coll *Collection) error {
	docs, err := c.aggregate(ctx, coll.DB, coll.Name, bson.A{
		bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}}}},
	})
	if err != nil {
		return err
	}
	for _, d := range docs {
		st, ok := d.Lookup("storageStats").DocumentOK()
		if !ok {
			continue
		}
		coll.Count += asInt(st.Lookup("count"))
		coll.Size += asInt(st.Lookup("size"))
		coll.StorageSize += asInt(st.Lookup("storageSize"))
		coll.TotalIndexSize += asInt(st.Lookup("totalIndexSize"))
		if sizes, ok := st.Lookup("indexSizes").DocumentOK(); ok {
			elems, _ := sizes.Elements()
			if coll.IndexSizes == nil {
				coll.IndexSizes = map[string]int64{}
			}
			for _, e := range elems {
				coll.IndexSizes[e.Key()] += asInt(e.Value())
			}
		}
	}
	if coll.Count > 0 {
		coll.AvgObjSize = coll.Size / coll.Count
	}
	return nil
}

// collectIndexes reads listIndexes.
func collectIndexes(ctx context.Context, c *conn, coll *Collection) error {
	docs, err := c.cursor(ctx, coll.DB, bson.D{{Key: "listIndexes", Value: coll.Name}})
	if err != nil {
		return err
	}
	for _, d := range docs {
		ix := parseIndexSpec(d)
		ix.Size = coll.IndexSizes[ix.Name]
		coll.Indexes = append(coll.Indexes, ix)
	}
	return nil
}

// parseIndexSpec reads one listIndexes entry.
func parseIndexSpec(d bson.Raw) *Index {
	ix := &Index{}
	ix.Name, _ = d.Lookup("name").StringValueOK()
	if key, ok := d.Lookup("key").DocumentOK(); ok {
		ix.Keys = parseKeys(key)
	}
	ix.Unique, _ = d.Lookup("unique").BooleanOK()
	ix.Sparse, _ = d.Lookup("sparse").BooleanOK()
	ix.Hidden, _ = d.Lookup("hidden").BooleanOK()
	if pf, ok := d.Lookup("partialFilterExpression").DocumentOK(); ok {
		ix.Partial = extJSON(pf)
		elems, _ := pf.Elements()
		for _, e := range elems {
			ix.PartialFields = append(ix.PartialFields, e.Key())
		}
	}
	_, err := d.LookupErr("expireAfterSeconds")
	ix.TTL = err == nil
	_, err = d.LookupErr("collation")
	ix.Collation = err == nil
	return ix
}

// parseKeys reads a key pattern.
func parseKeys(key bson.Raw) []Key {
	elems, _ := key.Elements()
	out := make([]Key, 0, len(elems))
	for _, e := range elems {
		v := e.Value()
		var dir any
		if s, ok := v.StringValueOK(); ok {
			dir = s
		} else if asFloat(v) < 0 {
			dir = -1
		} else {
			dir = 1
		}
		out = append(out, Key{Field: e.Key(), Dir: dir})
	}
	return out
}

// collectIndexStats reads $indexStats into the indexes.
func collectIndexStats(ctx context.Context, c *conn, coll *Collection) error {
	docs, err := c.aggregate(ctx, coll.DB, coll.Name, bson.A{bson.D{{Key: "$indexStats", Value: bson.D{}}}})
	if err != nil {
		return err
	}
	for _, d := range docs {
		name, _ := d.Lookup("name").StringValueOK()
		ix := coll.Index(name)
		if ix == nil {
			continue
		}
		// Sharded clusters answer once per shard: add them up.
		ix.Ops += asInt(d.Lookup("accesses", "ops"))
		if t, ok := d.Lookup("accesses", "since").TimeOK(); ok && (ix.Since.IsZero() || t.Before(ix.Since)) {
			ix.Since = t.UTC()
		}
	}
	return nil
}

// extJSON prints d as relaxed Extended JSON.
func extJSON(d bson.Raw) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return d.String()
	}
	return string(b)
}

// keysString formats a key pattern as {a: 1, b: -1}.
func keysString(keys []Key) string {
	s := "{"
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += quoteField(k.Field) + ": "
		switch d := k.Dir.(type) {
		case string:
			s += strconv.Quote(d)
		case int:
			s += strconv.Itoa(d)
		default:
			s += "1"
		}
	}
	return s + "}"
}

// quoteField quotes a field name for mongosh when it is not a plain
// identifier.
func quoteField(f string) string {
	for i, r := range f {
		ok := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return strconv.Quote(f)
		}
	}
	if f == "" {
		return `""`
	}
	return f
}

// sameKeys reports whether two key patterns are equal.
func sameKeys(a, b []Key) bool {
	return slices.EqualFunc(a, b, func(x, y Key) bool { return x.Field == y.Field && x.Dir == y.Dir })
}
