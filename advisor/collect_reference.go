package advisor

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Reference is an embedded copy of another collection's document: a field
// F holding {_id, …copied fields} whose _id values are the _id of a
// collection named like F in the same database. Drift counts, per copied
// field, sampled copies that differ from their source now.
type Reference struct {
	Field  string           `json:"field"`
	Source string           `json:"source"`
	Fields []string         `json:"fields"`
	Joined int64            `json:"joined"`
	Drift  map[string]int64 `json:"drift"`
}

// sourceNames returns the collection names a reference field may point
// at: "customer" → customer, customers, customeres; "category" →
// categories.
func sourceNames(field string) []string {
	out := []string{field, field + "s", field + "es"}
	if strings.HasSuffix(field, "y") {
		out = append(out, strings.TrimSuffix(field, "y")+"ies")
	}
	return out
}

// collectReferences finds embedded references in each collection of d
// and measures their drift with a $sample, a $lookup on _id and a $group.
func collectReferences(ctx context.Context, c *conn, p *plan, snap *Snapshot, d *Database) {
	names := map[string]bool{}
	for _, coll := range d.Collections {
		names[coll.Name] = true
	}
	for _, coll := range d.Collections {
		if coll.Schema == nil {
			continue
		}
		for _, f := range coll.Schema.Fields {
			if strings.Contains(f.Path, ".") || f.Dominant() != "object" || f.Docs*2 < coll.Schema.Sampled {
				continue
			}
			if coll.Schema.Field(f.Path+"._id") == nil {
				continue
			}
			src := ""
			for _, n := range sourceNames(f.Path) {
				if names[n] && n != coll.Name {
					src = n
					break
				}
			}
			if src == "" {
				continue
			}
			ref := &Reference{Field: f.Path, Source: src, Drift: map[string]int64{}}
			for _, sub := range coll.Schema.Fields {
				if rest, ok := strings.CutPrefix(sub.Path, f.Path+"."); ok && rest != "_id" && !strings.Contains(rest, ".") {
					ref.Fields = append(ref.Fields, rest)
				}
			}
			if len(ref.Fields) == 0 {
				continue
			}
			slices.Sort(ref.Fields)
			if len(ref.Fields) > 20 {
				ref.Fields = ref.Fields[:20]
			}
			if err := measureDrift(ctx, c, p, coll, ref); err != nil {
				snap.note("%s: drift of %s from %s: %v", coll.NS(), ref.Field, src, err)
				continue
			}
			coll.Schema.References = append(coll.Schema.References, ref)
		}
	}
}

// measureDrift fills ref.Joined and ref.Drift.
func measureDrift(ctx context.Context, c *conn, p *plan, coll *Collection, ref *Reference) error {
	group := bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: d("$sum", 1)}}
	for i, f := range ref.Fields {
		group = append(group, bson.E{Key: "d" + strconv.Itoa(i), Value: d("$sum", d("$cond", bson.A{
			d("$ne", bson.A{"$r." + f, "$src." + f}), 1, 0}))})
	}
	docs, err := c.aggregate(ctx, coll.DB, coll.Name, bson.A{
		d("$sample", bson.D{{Key: "size", Value: p.o.Sample}}),
		d("$match", bson.D{{Key: ref.Field + "._id", Value: d("$exists", true)}}),
		d("$lookup", bson.D{{Key: "from", Value: ref.Source}, {Key: "localField", Value: ref.Field + "._id"},
			{Key: "foreignField", Value: "_id"}, {Key: "as", Value: "__src"}}),
		d("$project", bson.D{{Key: "_id", Value: 0}, {Key: "r", Value: "$" + ref.Field}, {Key: "src", Value: d("$first", "$__src")}}),
		d("$match", bson.D{{Key: "src", Value: d("$type", "object")}}),
		d("$group", group),
	})
	if err != nil {
		return err
	}
	for _, r := range docs {
		ref.Joined = asInt(r.Lookup("n"))
		for i, f := range ref.Fields {
			ref.Drift[f] = asInt(r.Lookup("d" + strconv.Itoa(i)))
		}
	}
	return nil
}
