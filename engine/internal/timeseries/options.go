package timeseries

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Options are a time series collection's settings, with the bucketing
// parameters filled in as mongod 7.0 stores them.
type Options struct {
	TimeField   string
	MetaField   string // "" when the collection has none
	Granularity string // "seconds", "minutes", "hours" or "" (custom span)
	MaxSpan     int64  // bucketMaxSpanSeconds
	Rounding    int64  // bucketRoundingSeconds
}

// HasMeta reports whether the collection has a metaField.
func (o *Options) HasMeta() bool { return o.MetaField != "" }

// granularity spans: bucketMaxSpanSeconds and bucketRoundingSeconds of
// each granularity (mongod's getMaxSpanSecondsFromGranularity and
// getBucketRoundingSecondsFromGranularity).
var granularitySpans = map[string][2]int64{
	"seconds": {60 * 60, 60},
	"minutes": {60 * 60 * 24, 60 * 60},
	"hours":   {60 * 60 * 24 * 30, 60 * 60 * 24},
}

// GranularityRank orders granularities from finest to coarsest; collMod
// may only widen.
func GranularityRank(g string) int {
	switch g {
	case "seconds":
		return 1
	case "minutes":
		return 2
	case "hours":
		return 3
	}
	return 0
}

// Parse parses the timeseries option of create (cmd names the command in
// IDL error messages) and fills in the bucketing parameters as mongod's
// validateAndSetBucketingParameters does. Errors: TypeMismatch, 40414 for
// a missing timeField, 40415 for an unknown field, BadValue for an unknown
// granularity, 51024 for a span below 1, InvalidOptions for inconsistent
// parameters.
func Parse(cmd string, v bson.RawValue) (*Options, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.timeseries' is the wrong type '%s', expected type 'object'", cmd, bsonkit.TypeName(v.Type))
	}
	path := cmd + ".timeseries"
	o := &Options{}
	var haveTime, haveSpan, haveRound bool
	elems, err := d.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	for _, e := range elems {
		k, ev := e.Key(), e.Value()
		switch k {
		case "timeField", "metaField", "granularity":
			s, ok := ev.StringValueOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'string'", path, k, bsonkit.TypeName(ev.Type))
			}
			switch k {
			case "timeField":
				o.TimeField, haveTime = s, true
			case "metaField":
				o.MetaField = s
			default:
				if _, ok := granularitySpans[s]; !ok {
					return nil, mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field '%s.granularity' is not a valid value.", s, path)
				}
				o.Granularity = s
			}
		case "bucketMaxSpanSeconds", "bucketRoundingSeconds":
			n, err := safeInt(path, k, ev)
			if err != nil {
				return nil, err
			}
			if k == "bucketMaxSpanSeconds" {
				o.MaxSpan, haveSpan = n, true
			} else {
				o.Rounding, haveRound = n, true
			}
		default:
			return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '%s.%s' is an unknown field.", path, k)
		}
	}
	if !haveTime {
		return nil, mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.timeField' is missing but a required field", path)
	}
	if err := o.setBucketing(haveSpan, haveRound); err != nil {
		return nil, err
	}
	return o, nil
}

// safeInt parses an IDL safeInt with a {gte: 1} validator.
func safeInt(path, k string, v bson.RawValue) (int64, error) {
	if !bsonkit.IsNumber(v.Type) {
		return 0, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[long, int, decimal, double]'", path, k, bsonkit.TypeName(v.Type))
	}
	n, ok := bsonkit.TruncInt64(v)
	if !ok || n > 1<<31-1 || n < -1<<31 {
		return 0, mongoerr.Newf(mongoerr.BadValue, "BSON field '%s.%s' value cannot be represented as a 32-bit integer", path, k)
	}
	if n < 1 {
		return 0, mongoerr.Newf(mongoerr.Code(51024), "BSON field '%s' value must be >= 1, actual value '%d'", k, n)
	}
	return n, nil
}

// setBucketing checks granularity against the explicit spans and fills
// in what is missing (mongod 7.0's validateAndSetBucketingParameters).
func (o *Options) setBucketing(haveSpan, haveRound bool) error {
	g := o.Granularity
	if g == "" {
		g = "seconds"
	}
	def := granularitySpans[g]
	if o.Granularity != "" {
		if haveSpan && o.MaxSpan != def[0] {
			return mongoerr.Newf(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default of %d for the provided granularity", def[0])
		}
		if haveRound && o.Rounding != def[1] {
			return mongoerr.Newf(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' is not configurable to a value other than the default of %d for the provided granularity", def[1])
		}
		o.MaxSpan, o.Rounding = def[0], def[1]
		return nil
	}
	if haveSpan != haveRound {
		return mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other")
	}
	if o.Rounding != o.MaxSpan {
		return mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
	}
	if !haveSpan {
		o.Granularity, o.MaxSpan, o.Rounding = "seconds", def[0], def[1]
	}
	return nil
}

// CheckFields applies create's checks on the field names: top-level
// names, a metaField other than _id and the timeField. ns names the
// collection in the messages.
func (o *Options) CheckFields(ns string) error {
	if strings.Contains(o.TimeField, ".") {
		return mongoerr.Newf(mongoerr.InvalidOptions, "%s: 'timeField' must be a top-level field and not contain a '.'", ns)
	}
	if o.MetaField == "" {
		return nil
	}
	switch {
	case o.MetaField == "_id":
		return mongoerr.New(mongoerr.InvalidOptions, "'metaField' cannot be \"_id\"")
	case o.MetaField == o.TimeField:
		return mongoerr.New(mongoerr.InvalidOptions, "'metaField' cannot be the same as 'timeField'")
	case strings.Contains(o.MetaField, "."):
		return mongoerr.Newf(mongoerr.InvalidOptions, "%s: 'metaField' must be a top-level field and not contain a '.'", ns)
	}
	return nil
}

// Doc returns the options as listCollections shows them: timeField,
// metaField, granularity, bucketRoundingSeconds, bucketMaxSpanSeconds
// (mongod's TimeseriesOptions field order).
func (o *Options) Doc() bson.D {
	d := bson.D{{Key: "timeField", Value: o.TimeField}}
	if o.MetaField != "" {
		d = append(d, bson.E{Key: "metaField", Value: o.MetaField})
	}
	if o.Granularity != "" {
		d = append(d, bson.E{Key: "granularity", Value: o.Granularity})
	}
	d = append(d,
		bson.E{Key: "bucketRoundingSeconds", Value: int32(o.Rounding)},
		bson.E{Key: "bucketMaxSpanSeconds", Value: int32(o.MaxSpan)})
	return d
}

// FromDoc reads options stored by Doc. It returns nil when d is not one.
func FromDoc(d bson.Raw) *Options {
	tf, ok := d.Lookup("timeField").StringValueOK()
	if !ok {
		return nil
	}
	o := &Options{TimeField: tf}
	o.MetaField, _ = d.Lookup("metaField").StringValueOK()
	o.Granularity, _ = d.Lookup("granularity").StringValueOK()
	if n, ok := bsonkit.TruncInt64(d.Lookup("bucketMaxSpanSeconds")); ok {
		o.MaxSpan = n
	}
	if n, ok := bsonkit.TruncInt64(d.Lookup("bucketRoundingSeconds")); ok {
		o.Rounding = n
	}
	if o.MaxSpan < 1 {
		o.MaxSpan = 3600
	}
	if o.Rounding < 1 {
		o.Rounding = o.MaxSpan
	}
	return o
}

// SetGranularity changes the granularity as collMod does: only to a
// coarser one (or the same), and only on a collection that has one.
// Errors: InvalidOptions.
func (o *Options) SetGranularity(g string) error {
	def, ok := granularitySpans[g]
	if !ok {
		return mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field 'collMod.timeseries.granularity' is not a valid value.", g)
	}
	if o.Granularity == "" {
		// Custom bucketing: mongod accepts a granularity whose spans are
		// at least the custom ones.
		if def[0] < o.MaxSpan || def[1] < o.Rounding {
			return mongoerr.New(mongoerr.InvalidOptions, "Invalid transition for timeseries.granularity. Can only transition from 'seconds' to 'minutes' or 'minutes' to 'hours'.")
		}
	} else if GranularityRank(g) < GranularityRank(o.Granularity) {
		return mongoerr.New(mongoerr.InvalidOptions, "Invalid transition for timeseries.granularity. Can only transition from 'seconds' to 'minutes' or 'minutes' to 'hours'.")
	}
	o.Granularity, o.MaxSpan, o.Rounding = g, def[0], def[1]
	return nil
}
