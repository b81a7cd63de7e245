package advisor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxSchemaRows bounds each facet of the schema pipeline.
const maxSchemaRows = 2000

// Names of the $facet branches of the schema pipeline.
const (
	facetSize   = "size"
	facetTop    = "top"
	facetNested = "nested"
	facetKV     = "kv"
	facetDisc   = "disc"
)

// schemaPipeline returns the pipeline that infers a schema from a sample
// of n documents, all of it computed on the server: one $sample, each
// document turned into its fields with $objectToArray, and a $facet of
// $group stages for sizes, top-level paths, nested paths, k/v keys and
// discriminator-like values.
func schemaPipeline(n int, cutoff time.Time, discriminators int) bson.A {
	lenOf := func(v string) bson.D {
		return d("$cond", bson.A{d("$isArray", v), d("$size", v), nil})
	}
	isOld := func(v string) bson.D {
		return d("$cond", bson.A{
			d("$and", bson.A{d("$eq", bson.A{d("$type", v), "date"}), d("$lt", bson.A{v, bson.NewDateTimeFromTime(cutoff)})}),
			1, 0})
	}
	pct := func(v any, ps ...float64) bson.D {
		return d("$percentile", bson.D{{Key: "input", Value: v}, {Key: "p", Value: ps}, {Key: "method", Value: "approximate"}})
	}
	sum := func(v any) bson.D { return d("$sum", v) }
	isType := func(v, t string) bson.D { return d("$eq", bson.A{d("$type", v), t}) }
	numeric := d("$ne", bson.A{d("$convert", bson.D{
		{Key: "input", Value: "$e.v"}, {Key: "to", Value: "double"}, {Key: "onError", Value: nil}, {Key: "onNull", Value: nil}}), nil})
	cond := func(c any) bson.D { return d("$cond", bson.A{c, 1, 0}) }

	size := bson.A{d("$group", bson.D{
		{Key: "_id", Value: nil}, {Key: "n", Value: sum(1)},
		{Key: "p", Value: pct("$s", 0.5, 0.95, 0.99)}, {Key: "max", Value: d("$max", "$s")}})}
	top := bson.A{
		d("$unwind", "$f"),
		d("$group", bson.D{
			{Key: "_id", Value: bson.D{{Key: "k", Value: "$f.k"}, {Key: "t", Value: d("$type", "$f.v")}}},
			{Key: "n", Value: sum(1)}, {Key: "old", Value: sum(isOld("$f.v"))},
			{Key: "lp", Value: pct(lenOf("$f.v"), 0.5, 0.95)}, {Key: "lmax", Value: d("$max", lenOf("$f.v"))}}),
		d("$limit", maxSchemaRows),
	}
	subOf := d("$switch", bson.D{
		{Key: "branches", Value: bson.A{
			bson.D{{Key: "case", Value: isType("$f.v", "object")}, {Key: "then", Value: d("$objectToArray", "$f.v")}},
			bson.D{{Key: "case", Value: d("$isArray", "$f.v")}, {Key: "then", Value: d("$reduce", bson.D{
				{Key: "input", Value: d("$filter", bson.D{
					{Key: "input", Value: d("$slice", bson.A{"$f.v", 50})},
					{Key: "cond", Value: isType("$$this", "object")}})},
				{Key: "initialValue", Value: bson.A{}},
				{Key: "in", Value: d("$concatArrays", bson.A{"$$value", d("$objectToArray", "$$this")})}})}},
		}},
		{Key: "default", Value: bson.A{}}})
	nested := bson.A{
		d("$unwind", "$f"),
		d("$project", bson.D{{Key: "d", Value: 1}, {Key: "k", Value: "$f.k"}, {Key: "sub", Value: subOf}}),
		d("$unwind", "$sub"),
		d("$group", bson.D{
			{Key: "_id", Value: bson.D{{Key: "d", Value: "$d"}, {Key: "k", Value: d("$concat", bson.A{"$k", ".", "$sub.k"})}, {Key: "t", Value: d("$type", "$sub.v")}}},
			{Key: "old", Value: d("$max", isOld("$sub.v"))}, {Key: "len", Value: d("$max", lenOf("$sub.v"))}}),
		d("$group", bson.D{
			{Key: "_id", Value: bson.D{{Key: "k", Value: "$_id.k"}, {Key: "t", Value: "$_id.t"}}},
			{Key: "n", Value: sum(1)}, {Key: "old", Value: sum("$old")},
			{Key: "lp", Value: pct("$len", 0.5, 0.95)}, {Key: "lmax", Value: d("$max", "$len")}}),
		d("$limit", maxSchemaRows),
	}
	kv := bson.A{
		d("$unwind", "$f"),
		d("$match", bson.D{{Key: "f.v.k", Value: d("$type", "string")}}),
		d("$project", bson.D{{Key: "d", Value: 1}, {Key: "p", Value: "$f.k"},
			{Key: "e", Value: d("$cond", bson.A{d("$isArray", "$f.v"), d("$slice", bson.A{"$f.v", 200}), bson.A{}})}}),
		d("$unwind", "$e"),
		d("$match", bson.D{{Key: "e.k", Value: d("$type", "string")}}),
		d("$group", bson.D{
			{Key: "_id", Value: bson.D{{Key: "p", Value: "$p"}, {Key: "k", Value: "$e.k"}, {Key: "d", Value: "$d"}}},
			{Key: "n", Value: sum(1)},
			{Key: "str", Value: sum(cond(isType("$e.v", "string")))},
			{Key: "num", Value: sum(cond(d("$and", bson.A{isType("$e.v", "string"), numeric})))}}),
		d("$group", bson.D{
			{Key: "_id", Value: bson.D{{Key: "p", Value: "$_id.p"}, {Key: "k", Value: "$_id.k"}}},
			{Key: "docs", Value: sum(1)}, {Key: "n", Value: sum("$n")},
			{Key: "str", Value: sum("$str")}, {Key: "num", Value: sum("$num")}}),
		d("$sort", bson.D{{Key: "docs", Value: -1}, {Key: "_id.k", Value: 1}}),
		d("$limit", 500),
	}
	disc := bson.A{
		d("$unwind", "$f"),
		d("$project", bson.D{{Key: "k", Value: "$f.k"}, {Key: "v", Value: "$f.v"}, {Key: "t", Value: d("$type", "$f.v")}}),
		d("$match", bson.D{{Key: "k", Value: d("$ne", "_id")}, {Key: "t", Value: d("$in", bson.A{"string", "int", "long", "bool"})}}),
		d("$group", bson.D{{Key: "_id", Value: bson.D{{Key: "k", Value: "$k"}, {Key: "v", Value: "$v"}}}, {Key: "n", Value: sum(1)}}),
		d("$group", bson.D{{Key: "_id", Value: "$_id.k"}, {Key: "distinct", Value: sum(1)},
			{Key: "values", Value: d("$push", bson.D{{Key: "v", Value: "$_id.v"}, {Key: "n", Value: "$n"}})}}),
		d("$match", bson.D{{Key: "distinct", Value: d("$lte", discriminators)}}),
		d("$limit", 200),
	}
	return bson.A{
		d("$sample", bson.D{{Key: "size", Value: n}}),
		d("$project", bson.D{{Key: "_id", Value: 0}, {Key: "d", Value: "$_id"},
			{Key: "s", Value: d("$bsonSize", "$$ROOT")}, {Key: "f", Value: d("$objectToArray", "$$ROOT")}}),
		d("$facet", bson.D{{Key: facetSize, Value: size}, {Key: facetTop, Value: top},
			{Key: facetNested, Value: nested}, {Key: facetKV, Value: kv}, {Key: facetDisc, Value: disc}}),
	}
}

// d builds a one-field document.
func d(k string, v any) bson.D { return bson.D{{Key: k, Value: v}} }

// collectSchema runs the schema pipeline on coll and reads its result,
// then measures field presence per discriminator value for the likeliest
// discriminators.
func collectSchema(ctx context.Context, c *conn, p *plan, snap *Snapshot, coll *Collection) (*Schema, error) {
	docs, err := c.aggregate(ctx, coll.DB, coll.Name, schemaPipeline(p.o.Sample, snap.Cutoff, p.t.Discriminators))
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("schema pipeline returned %d documents", len(docs))
	}
	s := parseSchema(docs[0])
	for _, disc := range discriminatorCandidates(s, 3) {
		if err := collectPresence(ctx, c, p, coll, disc); err != nil {
			snap.note("%s: presence by %s: %v", coll.NS(), disc.Field, err)
		}
	}
	return s, nil
}

// rows returns the documents of facet name.
func rows(doc bson.Raw, name string) []bson.Raw {
	vals, _ := doc.Lookup(name).Array().Values()
	out := make([]bson.Raw, 0, len(vals))
	for _, v := range vals {
		if r, ok := v.DocumentOK(); ok {
			out = append(out, r)
		}
	}
	return out
}

// percentiles reads a $percentile result array.
func percentiles(v bson.RawValue) []float64 {
	vals, _ := v.Array().Values()
	out := make([]float64, len(vals))
	for i, x := range vals {
		out[i] = asFloat(x)
	}
	return out
}

// parseSchema reads the schema pipeline's one result document.
func parseSchema(doc bson.Raw) *Schema {
	s := &Schema{}
	for _, r := range rows(doc, facetSize) {
		s.Sampled = asInt(r.Lookup("n"))
		if p := percentiles(r.Lookup("p")); len(p) == 3 {
			s.SizeP50, s.SizeP95, s.SizeP99 = p[0], p[1], p[2]
		}
		s.SizeMax = asFloat(r.Lookup("max"))
	}
	fields := map[string]*Field{}
	addRows := func(name string) {
		for _, r := range rows(doc, name) {
			path, _ := r.Lookup("_id", "k").StringValueOK()
			typ, _ := r.Lookup("_id", "t").StringValueOK()
			if path == "" {
				continue
			}
			f := fields[path]
			if f == nil {
				f = &Field{Path: path, Types: map[string]int64{}}
				fields[path] = f
			}
			n := asInt(r.Lookup("n"))
			f.Types[typ] += n
			f.Docs += n
			f.Old += asInt(r.Lookup("old"))
			if typ == "array" {
				a := &ArrayStats{Count: n, Max: asFloat(r.Lookup("lmax"))}
				if p := percentiles(r.Lookup("lp")); len(p) == 2 {
					a.P50, a.P95 = p[0], p[1]
				}
				f.Array = a
			}
		}
	}
	addRows(facetTop)
	addRows(facetNested)
	for _, f := range fields {
		if s.Sampled > 0 {
			f.Docs = min(f.Docs, s.Sampled)
		}
		s.Fields = append(s.Fields, f)
	}
	slices.SortFunc(s.Fields, func(a, b *Field) int { return strings.Compare(a.Path, b.Path) })
	for _, r := range rows(doc, facetKV) {
		k := &KVKey{Docs: asInt(r.Lookup("docs")), Values: asInt(r.Lookup("n")),
			Strings: asInt(r.Lookup("str")), NumericStrings: asInt(r.Lookup("num"))}
		k.Path, _ = r.Lookup("_id", "p").StringValueOK()
		k.Key, _ = r.Lookup("_id", "k").StringValueOK()
		s.KV = append(s.KV, k)
	}
	for _, r := range rows(doc, facetDisc) {
		disc := &Discriminator{}
		disc.Field, _ = r.Lookup("_id").StringValueOK()
		var total int64
		for _, v := range rows(r, "values") {
			vc := ValueCount{Value: valueText(v.Lookup("v")), Count: asInt(v.Lookup("n"))}
			total += vc.Count
			disc.Values = append(disc.Values, vc)
		}
		slices.SortFunc(disc.Values, func(a, b ValueCount) int {
			if a.Count != b.Count {
				return int(b.Count - a.Count)
			}
			return strings.Compare(a.Value, b.Value)
		})
		disc.Missing = max(0, s.Sampled-total)
		s.Discriminators = append(s.Discriminators, disc)
	}
	slices.SortFunc(s.Discriminators, func(a, b *Discriminator) int { return strings.Compare(a.Field, b.Field) })
	return s
}

// valueText prints a scalar as mongosh would: strings quoted, numbers and
// booleans bare.
func valueText(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeString:
		return strconv.Quote(v.StringValue())
	case bson.TypeInt32, bson.TypeInt64:
		return strconv.FormatInt(asInt(v), 10)
	case bson.TypeBoolean:
		return strconv.FormatBool(v.Boolean())
	case bson.TypeDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	}
	return v.String()
}

// discriminatorCandidates returns up to n discriminators worth a presence
// pass: string fields with 2 or more values, present in at least 90% of
// the sample, with a plain name.
func discriminatorCandidates(s *Schema, n int) []*Discriminator {
	var out []*Discriminator
	for _, disc := range s.Discriminators {
		if len(out) == n {
			break
		}
		if len(disc.Values) < 2 || strings.ContainsAny(disc.Field, ".$") || disc.Field == "" {
			continue
		}
		if !strings.HasPrefix(disc.Values[0].Value, `"`) {
			continue
		}
		if s.Sampled == 0 || float64(disc.Missing) > 0.1*float64(s.Sampled) {
			continue
		}
		out = append(out, disc)
	}
	return out
}

// collectPresence measures, on a new sample, the share of documents of
// each value of disc that have each top-level field.
func collectPresence(ctx context.Context, c *conn, p *plan, coll *Collection, disc *Discriminator) error {
	docs, err := c.aggregate(ctx, coll.DB, coll.Name, bson.A{
		d("$sample", bson.D{{Key: "size", Value: p.o.Sample}}),
		d("$project", bson.D{{Key: "_id", Value: 0}, {Key: "v", Value: "$" + disc.Field},
			{Key: "ks", Value: d("$map", bson.D{{Key: "input", Value: d("$objectToArray", "$$ROOT")}, {Key: "in", Value: "$$this.k"}})}}),
		d("$unwind", "$ks"),
		d("$group", bson.D{{Key: "_id", Value: bson.D{{Key: "v", Value: "$v"}, {Key: "k", Value: "$ks"}}}, {Key: "n", Value: d("$sum", 1)}}),
		d("$limit", 5000),
	})
	if err != nil {
		return err
	}
	counts := map[string]map[string]int64{}
	for _, r := range docs {
		v, err := r.LookupErr("_id", "v")
		if err != nil || v.Type != bson.TypeString {
			continue
		}
		k, _ := r.Lookup("_id", "k").StringValueOK()
		val := valueText(v)
		if counts[val] == nil {
			counts[val] = map[string]int64{}
		}
		counts[val][k] = asInt(r.Lookup("n"))
	}
	disc.Presence = map[string]map[string]float64{}
	for val, ks := range counts {
		total := ks[disc.Field]
		if total == 0 {
			continue
		}
		m := map[string]float64{}
		for k, n := range ks {
			m[k] = float64(n) / float64(total)
		}
		disc.Presence[val] = m
	}
	return nil
}
