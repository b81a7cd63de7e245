package timeseries

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// maxFilterDepth bounds the nesting of $and/$or/$nor CheckUpdate follows.
const maxFilterDepth = 32

// onMeta reports whether path is the meta field or inside it.
func (c *Collection[M]) onMeta(path string) bool {
	return c.metaField != "" && (path == c.metaField || strings.HasPrefix(path, c.metaField+"."))
}

// restricted returns an error wrapping ErrRestriction.
func restricted(format string, args ...any) error {
	return fmt.Errorf("timeseries: "+format+": %w", append(args, ErrRestriction)...)
}

// CheckIndex reports, wrapping ErrRestriction, an index a time series
// collection refuses (MongoDB 7.0): unique (the server answers
// InvalidOptions 72, and a duplicate insert is not caught either), text,
// sparse or 2d on a field other than the meta field, and TTL
// (expireAfterSeconds) without a partialFilterExpression on the meta field
// only. Secondary and partial indexes on measurement fields are allowed.
func (c *Collection[M]) CheckIndex(m mongo.IndexModel) error {
	keys, err := bson.Marshal(m.Keys)
	if err != nil {
		return fmt.Errorf("timeseries: index keys: %w", err)
	}
	elems, err := bson.Raw(keys).Elements()
	if err != nil {
		return err
	}
	var o options.IndexOptions
	if m.Options != nil {
		for _, set := range m.Options.List() {
			if err := set(&o); err != nil {
				return err
			}
		}
	}
	what := bson.Raw(keys).String()
	if o.Unique != nil && *o.Unique {
		return restricted("index %s: unique indexes are not supported (InvalidOptions 72); a duplicate measurement or _id is accepted, so deduplicate before inserting", what)
	}
	allMeta := true
	for _, e := range elems {
		if !c.onMeta(e.Key()) {
			allMeta = false
		}
		if s, ok := e.Value().StringValueOK(); ok {
			switch s {
			case "text":
				return restricted("index %s: text indexes are not supported (InvalidOptions 72)", what)
			case "2d":
				if !c.onMeta(e.Key()) {
					return restricted("index %s: 2d indexes are only allowed on the metaField %q", what, c.metaField)
				}
			}
		}
	}
	if o.Sparse != nil && *o.Sparse && !allMeta {
		return restricted("index %s: sparse indexes are only allowed on the metaField %q", what, c.metaField)
	}
	if o.ExpireAfterSeconds != nil {
		ok := c.metaField != "" && o.PartialFilterExpression != nil
		if ok {
			pf, err := bson.Marshal(o.PartialFilterExpression)
			if err != nil {
				return err
			}
			fields, _ := bson.Raw(pf).Elements()
			for _, f := range fields {
				ok = ok && c.onMeta(f.Key())
			}
		}
		if !ok {
			return restricted("index %s: a TTL index needs a partialFilterExpression on the metaField only; set Config.ExpireAfter to expire whole buckets instead", what)
		}
	}
	return nil
}

// CheckUpdate reports, wrapping ErrRestriction, an update a time series
// collection refuses (MongoDB 7.0 without arbitrary time series updates):
// any update when there is no meta field, a replacement or a pipeline,
// and a filter or an update operator that names a field outside the meta
// field. Updates are always multi (UpdateMeta sends updateMany) and never
// upserts.
func (c *Collection[M]) CheckUpdate(filter bson.D, update bson.D) error {
	if c.metaField == "" {
		return restricted("update: the collection has no metaField, and only the metaField can be updated")
	}
	if err := c.checkFilter(filter, 0); err != nil {
		return err
	}
	if len(update) == 0 {
		return restricted("update: empty update")
	}
	for _, op := range update {
		if !strings.HasPrefix(op.Key, "$") {
			return restricted("update: a replacement document (field %q) cannot be applied; only update operators on the metaField %q can", op.Key, c.metaField)
		}
		fields, ok := op.Value.(bson.D)
		if !ok {
			return restricted("update: %s takes a document of metaField paths", op.Key)
		}
		for _, f := range fields {
			if !c.onMeta(f.Key) {
				return restricted("update: %s of %q: measurement fields cannot be updated, only the metaField %q (delete and reinsert the measurements instead)", op.Key, f.Key, c.metaField)
			}
			if op.Key == "$rename" {
				if to, _ := f.Value.(string); !c.onMeta(to) {
					return restricted("update: $rename of %q to %q: the target must stay within the metaField %q", f.Key, to, c.metaField)
				}
			}
		}
	}
	return nil
}

// checkFilter reports a filter field outside the meta field.
func (c *Collection[M]) checkFilter(filter bson.D, depth int) error {
	if depth > maxFilterDepth {
		return restricted("update: filter nested deeper than %d", maxFilterDepth)
	}
	for _, e := range filter {
		switch e.Key {
		case "$and", "$or", "$nor":
			arr, ok := e.Value.(bson.A)
			if !ok {
				if ds, isD := e.Value.([]bson.D); isD {
					for _, d := range ds {
						arr = append(arr, d)
					}
				} else {
					return restricted("update: filter %s takes an array of documents", e.Key)
				}
			}
			for _, sub := range arr {
				d, ok := sub.(bson.D)
				if !ok {
					return restricted("update: filter %s takes an array of documents", e.Key)
				}
				if err := c.checkFilter(d, depth+1); err != nil {
					return err
				}
			}
		default:
			if !c.onMeta(e.Key) {
				return restricted("update: the filter names %q: an update may only filter on the metaField %q", e.Key, c.metaField)
			}
		}
	}
	return nil
}

// checkMeasurement reports a measurement the server would refuse or that
// is almost surely a mistake: no time, a zero time, an array meta value.
func (c *Collection[M]) checkMeasurement(doc bson.Raw) error {
	t := doc.Lookup(c.timeField)
	if t.Type != bson.TypeDateTime {
		return restricted("insert: %q must be present and contain a valid BSON UTC datetime value (got %v)", c.timeField, t.Type)
	}
	if t.DateTime() == zeroTime {
		return restricted("insert: %q is the zero time.Time (year 1): set the measurement's time", c.timeField)
	}
	if c.metaField != "" && doc.Lookup(c.metaField).Type == bson.TypeArray {
		return restricted("insert: the metaField %q holds an array; a meta value cannot be an array", c.metaField)
	}
	return nil
}

// zeroTime is the BSON date of a zero time.Time.
const zeroTime = -62135596800000
