package timeseries

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// BucketIndexKey translates the key pattern of an index on the time
// series into the key of the index on its buckets, as mongod's
// createBucketsIndexSpecFromTimeseriesIndexSpec does: a meta path keeps
// its value under "meta"; the time field (and any measurement field) in
// ascending order becomes control.min.<f>: 1, control.max.<f>: 1 and in
// descending order control.max.<f>: -1, control.min.<f>: -1; a 2dsphere
// measurement field becomes data.<f>: "2dsphere_bucket". Errors are
// CannotCreateIndex with mongod's reason.
func (o *Options) BucketIndexKey(key bson.Raw) (bson.Raw, error) {
	idx, out := bsoncore.AppendDocumentStart(nil)
	var err error
	bsonkit.ForEach(key, func(k string, v bson.RawValue) bool {
		if o.isMetaPath(k) {
			out = appendValue(out, o.metaRename(k), v)
			return true
		}
		if s, ok := v.StringValueOK(); ok && s == "2dsphere" && !strings.HasPrefix(k, "$") {
			// mongod 6.0+: a 2dsphere index on a measurement indexes the
			// bucket's data column with the 2dsphere_bucket plugin.
			out = bsoncore.AppendStringElement(out, "data."+k, "2dsphere_bucket")
			return true
		}
		dir, ok := bsonkit.Float64(v)
		if !ok || (dir != 1 && dir != -1) {
			err = mongoerr.Newf(mongoerr.CannotCreateIndex, "BadValue: Invalid index spec for time-series collection: %s. Indexes on measurement fields are only supported in ascending or descending order", fmtKey(key))
			return false
		}
		if strings.HasPrefix(k, "$") {
			err = mongoerr.Newf(mongoerr.CannotCreateIndex, "BadValue: Invalid index spec for time-series collection: %s", fmtKey(key))
			return false
		}
		lo, hi := "control.min."+k, "control.max."+k
		if dir > 0 {
			out = appendValue(out, lo, v)
			out = appendValue(out, hi, v)
		} else {
			out = appendValue(out, hi, v)
			out = appendValue(out, lo, v)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, nil
}

// UserIndexKey reverses BucketIndexKey: the key pattern listIndexes shows
// for an index on the buckets. ok is false when key is not one that
// BucketIndexKey makes.
func (o *Options) UserIndexKey(key bson.Raw) (bson.Raw, bool) {
	vals := []struct {
		k string
		v bson.RawValue
	}{}
	bsonkit.ForEach(key, func(k string, v bson.RawValue) bool {
		vals = append(vals, struct {
			k string
			v bson.RawValue
		}{k, v})
		return true
	})
	idx, out := bsoncore.AppendDocumentStart(nil)
	for i := 0; i < len(vals); i++ {
		k, v := vals[i].k, vals[i].v
		switch {
		case o.MetaField != "" && (k == "meta" || strings.HasPrefix(k, "meta.")):
			out = appendValue(out, o.MetaField+k[len("meta"):], v)
		case strings.HasPrefix(k, "data.") && v.Type == bson.TypeString && v.StringValue() == "2dsphere_bucket":
			out = bsoncore.AppendStringElement(out, k[len("data."):], "2dsphere")
		case strings.HasPrefix(k, "control.min.") || strings.HasPrefix(k, "control.max."):
			f := k[len("control.min."):]
			other := "control.max." + f
			if strings.HasPrefix(k, "control.max.") {
				other = "control.min." + f
			}
			if i+1 >= len(vals) || vals[i+1].k != other {
				return nil, false
			}
			out = appendValue(out, f, v)
			i++
		default:
			return nil, false
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, true
}

// DefaultIndexKey returns the buckets key of the index mongod 7.0 creates
// with a time series that has a metaField: {meta: 1, control.min.<time>:
// 1, control.max.<time>: 1}, shown to users as {<meta>: 1, <time>: 1}.
func (o *Options) DefaultIndexKey() bson.D {
	return bson.D{{Key: "meta", Value: int32(1)}, {Key: "control.min." + o.TimeField, Value: int32(1)}, {Key: "control.max." + o.TimeField, Value: int32(1)}}
}

// fmtKey renders a key pattern for error messages.
func fmtKey(key bson.Raw) string {
	var sb strings.Builder
	sb.WriteString("{ ")
	i := 0
	bsonkit.ForEach(key, func(k string, v bson.RawValue) bool {
		if i > 0 {
			sb.WriteString(", ")
		}
		i++
		sb.WriteString(k + ": " + v.String())
		return true
	})
	sb.WriteString(" }")
	return sb.String()
}
