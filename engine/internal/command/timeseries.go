package command

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

// A time series collection is two catalog entries, as in mongod 7.0: the
// collection the user names, whose options hold {timeseries, and
// expireAfterSeconds when set} and which reads as a view over its buckets
// through $_internalUnpackBucket, and system.buckets.<name>, the real
// collection of bucket documents with the automatic {meta, time} index.
// https://www.mongodb.com/docs/v7.0/core/timeseries-collections/

// bucketsPrefix is the prefix of a time series' buckets collection.
const bucketsPrefix = "system.buckets."

// tsColl is a time series collection as the commands see it.
type tsColl struct {
	ns, bucketsNS string
	opts          *timeseries.Options
	expire        *int64 // expireAfterSeconds, nil when unset
}

// tsOf returns the time series c defines when c is the user-facing entry
// of one, or nil.
func tsOf(c *storage.Collection) *tsColl {
	if c == nil || len(c.Options) == 0 || strings.HasPrefix(c.Name, bucketsPrefix) {
		return nil
	}
	v, err := c.Options.LookupErr("timeseries")
	if err != nil {
		return nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return nil
	}
	o := timeseries.FromDoc(d)
	if o == nil {
		return nil
	}
	t := &tsColl{ns: c.NS, bucketsNS: c.DB + "." + bucketsPrefix + c.Name, opts: o}
	if e, err := c.Options.LookupErr("expireAfterSeconds"); err == nil {
		if n, ok := asInt(e); ok {
			t.expire = &n
		}
	}
	return t
}

// tsColl returns the time series ns, or nil.
func (e *Env) tsColl(ns string) *tsColl { return tsOf(e.Store.Collection(ns)) }

// timeseriesView returns the view a time series reads as: its buckets
// unpacked, mongod's generateViewPipeline.
func timeseriesView(c *storage.Collection) *viewDef {
	t := tsOf(c)
	if t == nil {
		return nil
	}
	spec := bson.D{{Key: "timeField", Value: t.opts.TimeField}}
	if t.opts.MetaField != "" {
		spec = append(spec, bson.E{Key: "metaField", Value: t.opts.MetaField})
	}
	spec = append(spec, bson.E{Key: "bucketMaxSpanSeconds", Value: int32(t.opts.MaxSpan)})
	st, _ := bson.Marshal(bson.D{{Key: "$_internalUnpackBucket", Value: spec}})
	return &viewDef{ns: c.NS, viewOn: t.bucketsNS, pipeline: []bson.Raw{st}}
}

// Divergence: mongod 7.0 stores a time series' view in system.views,
// which listCollections then lists; the engine keeps it in the catalog
// entry and lists no system.views. The buckets collection keeps an _id
// index internally (mongod's is clustered, with no index), hidden from
// the time series' listIndexes but shown by listIndexes on
// system.buckets.<name>. Tested by TestTimeseriesCatalogShape.

// timeseriesInfo is listCollections' entry for the two halves of a time
// series: type "timeseries" with its options and info {readOnly: false}
// for the collection, and for system.buckets.<name> a clustered
// collection (no idIndex). ok is false for any other collection.
func timeseriesInfo(c *storage.Collection, nameOnly bool) (bson.Raw, bool) {
	typ := "timeseries"
	info := bson.D{{Key: "readOnly", Value: false}}
	switch {
	case tsOf(c) != nil:
	case strings.HasPrefix(c.Name, bucketsPrefix) && len(c.Options) > 0 && c.Options.Lookup("timeseries").Type == bson.TypeEmbeddedDocument:
		typ = "collection"
		info = append(info, bson.E{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}})
	default:
		return nil, false
	}
	d := bson.D{{Key: "name", Value: c.Name}, {Key: "type", Value: typ}}
	if !nameOnly {
		d = append(d, bson.E{Key: "options", Value: c.Options}, bson.E{Key: "info", Value: info})
	}
	b, _ := bson.Marshal(d)
	return b, true
}

// tsCreateAllowed are the create options mongod accepts with timeseries
// (timeseries::kAllowedCollectionCreationOptions).
var tsCreateAllowed = map[string]bool{
	"timeseries": true, "expireAfterSeconds": true, "storageEngine": true,
	"indexOptionDefaults": true, "collation": true, "temp": true,
}

// createTimeseries creates the time series name from the create command
// r: validates the options as mongod does (InvalidOptions for options not
// allowed with timeseries and bad field names, the IDL errors of
// timeseries), then creates system.buckets.<name> with the {meta, time}
// index when there is a metaField, and the collection itself.
// https://www.mongodb.com/docs/v7.0/reference/command/create/
func (r *Request) createTimeseries(name string, tsVal bson.RawValue, expVal *bson.RawValue) (bson.D, error) {
	ns := r.DB + "." + name
	if err := r.checkTimeseriesCreate(name); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, bucketsPrefix) {
		return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid namespace: %s", ns)
	}
	o, err := timeseries.Parse("create", tsVal)
	if err != nil {
		return nil, err
	}
	if err := o.CheckFields(ns); err != nil {
		return nil, err
	}
	var expire *int64
	if expVal != nil {
		n, err := parseTSExpire("create", *expVal)
		if err != nil {
			return nil, err
		}
		expire = &n
	}
	view, buckets := tsCatalogOptions(o, expire, r.Body)
	if err := checkDBCase(r.Env.Store, r.DB); err != nil {
		return nil, err
	}
	bucketsNS := r.DB + "." + bucketsPrefix + name
	err = r.Env.Store.Write(func(w *storage.Writer) error {
		if w.Collection(ns) != nil {
			return mongoerr.Newf(mongoerr.NamespaceExists, "Collection %s already exists.", ns)
		}
		if _, err := w.CreateCollection(bucketsNS, buckets); err != nil {
			return err
		}
		if o.HasMeta() {
			sp, err := tsIndexSpec(o, o.DefaultIndexKey(), o.MetaField+"_1_"+o.TimeField+"_1")
			if err != nil {
				return err
			}
			if _, err := w.CreateIndex(bucketsNS, sp); err != nil {
				return err
			}
		}
		_, err := w.CreateCollection(ns, view)
		return err
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// tsIndexSpec builds the spec of an index on the buckets.
func tsIndexSpec(o *timeseries.Options, key bson.D, name string) (index.Spec, error) {
	raw, err := bson.Marshal(bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: key}, {Key: "name", Value: name}})
	if err != nil {
		return index.Spec{}, err
	}
	return index.ParseSpec(raw)
}

// parseTSExpire parses expireAfterSeconds of a time series (create and
// collMod): a non-negative number of seconds that fits 32 bits.
func parseTSExpire(cmd string, v bson.RawValue) (int64, error) {
	if !isNumber(v) {
		return 0, mongoerr.FieldType(cmd, "expireAfterSeconds", typeName(v.Type), "long")
	}
	f, _ := asFloat(v)
	if math.IsNaN(f) {
		return 0, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
	}
	n := int64(f)
	if n < 0 {
		return 0, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
	}
	if n > math.MaxInt32 {
		return 0, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
	}
	return n, nil
}

// tsCatalogOptions returns the stored options of the collection and of
// its buckets, in mongod's CollectionOptions order. storageEngine,
// indexOptionDefaults and collation from body are kept on both.
func tsCatalogOptions(o *timeseries.Options, expire *int64, body bson.Raw) (view, buckets bson.Raw) {
	var common bson.D
	for _, k := range []string{"storageEngine", "indexOptionDefaults", "collation"} {
		if v, err := body.LookupErr(k); err == nil {
			common = append(common, bson.E{Key: k, Value: v})
		}
	}
	v := append(bson.D(nil), common...)
	b := bson.D{}
	for _, e := range common {
		if e.Key != "collation" {
			b = append(b, e)
		}
	}
	b = append(b, bson.E{Key: "validator", Value: bucketValidator(o.TimeField)})
	for _, e := range common {
		if e.Key == "collation" {
			b = append(b, e)
		}
	}
	b = append(b, bson.E{Key: "clusteredIndex", Value: true})
	if expire != nil {
		v = append(v, bson.E{Key: "expireAfterSeconds", Value: *expire})
		b = append(b, bson.E{Key: "expireAfterSeconds", Value: *expire})
	}
	v = append(v, bson.E{Key: "timeseries", Value: o.Doc()})
	b = append(b, bson.E{Key: "timeseries", Value: o.Doc()})
	vr, _ := bson.Marshal(v)
	br, _ := bson.Marshal(b)
	return vr, br
}

// bucketValidator is the $jsonSchema mongod 7.0 puts on a buckets
// collection (shown by listCollections; the engine writes buckets itself
// and does not run it).
func bucketValidator(timeField string) bson.D {
	date := bson.D{{Key: "bsonType", Value: "object"}, {Key: "required", Value: bson.A{timeField}}, {Key: "properties", Value: bson.D{{Key: timeField, Value: bson.D{{Key: "bsonType", Value: "date"}}}}}}
	return bson.D{{Key: "$jsonSchema", Value: bson.D{
		{Key: "bsonType", Value: "object"},
		{Key: "required", Value: bson.A{"control"}},
		{Key: "properties", Value: bson.D{{Key: "control", Value: bson.D{
			{Key: "bsonType", Value: "object"},
			{Key: "required", Value: bson.A{"version", "min", "max"}},
			{Key: "properties", Value: bson.D{
				{Key: "version", Value: bson.D{{Key: "bsonType", Value: "number"}}},
				{Key: "min", Value: date},
				{Key: "max", Value: date},
				{Key: "closed", Value: bson.D{{Key: "bsonType", Value: "bool"}}},
				{Key: "count", Value: bson.D{{Key: "bsonType", Value: "number"}, {Key: "minimum", Value: int32(1)}}},
			}},
			{Key: "additionalProperties", Value: false},
		}}}},
	}}}
}

// tsCommands are the commands a time series answers itself rather than
// as a view (CommandNotSupportedOnView).
var tsCommands = map[string]bool{
	"insert": true, "update": true, "delete": true,
	"createIndexes": true, "listIndexes": true, "dropIndexes": true,
}

// tsOption records create's timeseries or expireAfterSeconds field.
func tsOption(k string, v bson.RawValue, ts, exp *bson.RawValue) (*bson.RawValue, *bson.RawValue) {
	vv := v
	if k == "timeseries" {
		return &vv, exp
	}
	return ts, &vv
}

// createTimeseriesOrFail creates a time series, or answers mongod's
// errors for expireAfterSeconds without timeseries and for timeseries
// with viewOn.
func (r *Request) createTimeseriesOrFail(name string, ts, exp *bson.RawValue) (bson.D, error) {
	if ts == nil {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "'expireAfterSeconds' is only supported on time-series collections or when the 'clusteredIndex' option is specified")
	}
	return r.createTimeseries(name, *ts, exp)
}

// checkTimeseriesCreate refuses, when create asks for a time series, the
// options mongod does not allow with one (InvalidOptions "'timeseries' is
// not allowed with '<option>'"); it runs before the options are parsed,
// so that options the engine would answer NotImplemented for get
// mongod's answer.
func (r *Request) checkTimeseriesCreate(name string) error {
	if _, err := r.Body.LookupErr("timeseries"); err != nil {
		return nil
	}
	elems, _ := r.Body.Elements()
	for _, e := range elems[1:] {
		k := e.Key()
		if isGeneric(k) || tsCreateAllowed[k] {
			continue
		}
		if k == "capped" {
			if on, _ := asBool(e.Value()); !on {
				continue
			}
		}
		return mongoerr.Newf(mongoerr.InvalidOptions, "%s.%s: 'timeseries' is not allowed with '%s'", r.DB, name, k)
	}
	return nil
}
