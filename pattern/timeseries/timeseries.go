package timeseries

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors; match them with errors.Is. ErrInvalidConfig is the
// value every pattern package shares.
var (
	// ErrInvalidConfig is wrapped by Config.Validate and New.
	ErrInvalidConfig = pattern.ErrInvalidConfig
	// ErrRestriction: the operation is one a time series collection
	// refuses (a unique index, an update of a measurement field, an
	// upsert, a measurement without its time…); the error says which
	// restriction and what to do instead, before the server is asked.
	ErrRestriction = errors.New("not allowed on a time series collection")
	// ErrExists: the collection exists with other options (not a time
	// series collection, other time or meta field).
	ErrExists = errors.New("collection exists with other options")
)

// Granularities, as the server spells them.
const (
	Seconds = "seconds"
	Minutes = "minutes"
	Hours   = "hours"
)

// maxSpan is the largest bucketMaxSpanSeconds the server accepts.
const maxSpan = 365 * 24 * time.Hour

// spans are each granularity's bucketMaxSpanSeconds and
// bucketRoundingSeconds.
var spans = []struct {
	name           string
	span, rounding time.Duration
}{
	{Seconds, time.Hour, time.Minute},
	{Minutes, 24 * time.Hour, time.Hour},
	{Hours, 30 * 24 * time.Hour, 24 * time.Hour},
}

// Config describes a time series collection; the time and meta fields
// come from the measurement type's struct tags.
type Config struct {
	// Granularity is Seconds, Minutes or Hours; the server's default
	// (seconds) when it and the custom bucketing are empty.
	Granularity string
	// BucketMaxSpan and BucketRounding set custom bucketing (MongoDB
	// 6.3+): both or neither, equal, whole seconds, at most a year; not
	// with Granularity.
	BucketMaxSpan, BucketRounding time.Duration
	// ExpireAfter deletes whole buckets once their newest measurement is
	// older; zero keeps them.
	ExpireAfter time.Duration
	// Indexes are secondary indexes, checked against the time series
	// restrictions by EnsureIndexes.
	Indexes []mongo.IndexModel
}

// Validate reports whether c is usable; its error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("timeseries: config: %w: %w", err, ErrInvalidConfig)
	}
	return nil
}

// check is Validate without the sentinel.
func (c Config) check() error {
	switch c.Granularity {
	case "", Seconds, Minutes, Hours:
	default:
		return fmt.Errorf("Granularity %q: want seconds, minutes or hours", c.Granularity)
	}
	custom := c.BucketMaxSpan != 0 || c.BucketRounding != 0
	if custom && c.Granularity != "" {
		return errors.New("Granularity and BucketMaxSpan/BucketRounding exclude each other")
	}
	if custom {
		if c.BucketMaxSpan != c.BucketRounding {
			return fmt.Errorf("BucketMaxSpan %v and BucketRounding %v must be equal", c.BucketMaxSpan, c.BucketRounding)
		}
		if c.BucketMaxSpan < time.Second || c.BucketMaxSpan > maxSpan || c.BucketMaxSpan%time.Second != 0 {
			return fmt.Errorf("BucketMaxSpan %v: want whole seconds from 1s to 365 days", c.BucketMaxSpan)
		}
	}
	if c.ExpireAfter < 0 || c.ExpireAfter%time.Second != 0 {
		return fmt.Errorf("ExpireAfter %v: want whole seconds, not negative", c.ExpireAfter)
	}
	return nil
}

// span returns the bucket span and rounding c asks for.
func (c Config) span() (time.Duration, time.Duration) {
	if c.BucketMaxSpan != 0 {
		return c.BucketMaxSpan, c.BucketRounding
	}
	g := c.Granularity
	if g == "" {
		g = Seconds
	}
	for _, s := range spans {
		if s.name == g {
			return s.span, s.rounding
		}
	}
	return time.Hour, time.Minute
}

// Collection is a time series collection of measurements M: the user's
// struct, whose time field is tagged `timeseries:"time"` (a time.Time or
// bson.DateTime) and whose optional meta field is tagged
// `timeseries:"meta"`.
type Collection[M any] struct {
	db        *mongo.Database
	coll      *mongo.Collection
	cfg       Config
	timeField string
	metaField string
}

// New declares the time series collection name in db for measurements M.
// It reads M's tags and fails with ErrInvalidConfig when there is no time
// field, two of either, a time field that is not a date, a meta field
// that is an array or _id, or both on one field.
func New[M any](db *mongo.Database, name string, cfg Config) (*Collection[M], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tf, mf, err := fieldsOf(reflect.TypeFor[M]())
	if err != nil {
		return nil, fmt.Errorf("timeseries: %v: %w: %w", reflect.TypeFor[M](), err, ErrInvalidConfig)
	}
	return &Collection[M]{db: db, coll: db.Collection(name), cfg: cfg, timeField: tf, metaField: mf}, nil
}

var (
	timeType = reflect.TypeFor[time.Time]()
	dateType = reflect.TypeFor[bson.DateTime]()
	byteType = reflect.TypeFor[[]byte]()
)

// fieldsOf reads the time and meta fields' bson names from t's tags.
func fieldsOf(t reflect.Type) (timeField, metaField string, err error) {
	if t.Kind() != reflect.Struct {
		return "", "", errors.New("measurements must be a struct type")
	}
	for i := range t.NumField() {
		f := t.Field(i)
		role, ok := f.Tag.Lookup("timeseries")
		if !ok {
			continue
		}
		name := strings.Split(f.Tag.Get("bson"), ",")[0]
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == "-" || !f.IsExported() {
			return "", "", fmt.Errorf("field %s is tagged timeseries but not encoded", f.Name)
		}
		if strings.ContainsAny(name, ".$\x00") {
			return "", "", fmt.Errorf("field name %q", name)
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch role {
		case "time":
			if timeField != "" {
				return "", "", errors.New("two time fields")
			}
			if ft != timeType && ft != dateType {
				return "", "", fmt.Errorf("time field %s is a %v: want time.Time or bson.DateTime", f.Name, f.Type)
			}
			timeField = name
		case "meta":
			if metaField != "" {
				return "", "", errors.New("two meta fields")
			}
			if name == "_id" {
				return "", "", errors.New("the metaField cannot be _id")
			}
			if (ft.Kind() == reflect.Slice && ft != byteType) || ft.Kind() == reflect.Array {
				return "", "", fmt.Errorf("meta field %s is an array: a metaField cannot be an array", f.Name)
			}
			metaField = name
		default:
			return "", "", fmt.Errorf("field %s: timeseries tag %q: want time or meta", f.Name, role)
		}
	}
	if timeField == "" {
		return "", "", errors.New(`no field tagged timeseries:"time"`)
	}
	if timeField == "_id" {
		return "", "", errors.New("the timeField cannot be _id")
	}
	if timeField == metaField {
		return "", "", errors.New("the time and meta fields are one field")
	}
	return timeField, metaField, nil
}

// Collection returns the underlying collection.
func (c *Collection[M]) Collection() *mongo.Collection { return c.coll }

// TimeField returns the time field's name.
func (c *Collection[M]) TimeField() string { return c.timeField }

// MetaField returns the meta field's name, empty when there is none.
func (c *Collection[M]) MetaField() string { return c.metaField }

// Options returns the createCollection options Create sends.
func (c *Collection[M]) Options() *options.CreateCollectionOptionsBuilder {
	ts := options.TimeSeries().SetTimeField(c.timeField)
	if c.metaField != "" {
		ts.SetMetaField(c.metaField)
	}
	if c.cfg.Granularity != "" {
		ts.SetGranularity(c.cfg.Granularity)
	}
	if c.cfg.BucketMaxSpan != 0 {
		ts.SetBucketMaxSpan(c.cfg.BucketMaxSpan).SetBucketRounding(c.cfg.BucketRounding)
	}
	o := options.CreateCollection().SetTimeSeriesOptions(ts)
	if c.cfg.ExpireAfter > 0 {
		o.SetExpireAfterSeconds(int64(c.cfg.ExpireAfter / time.Second))
	}
	return o
}

// Create creates the collection. An existing time series collection with
// the same time and meta fields is kept as it is; any other existing
// collection of that name fails with ErrExists (a collection cannot be
// converted to or from a time series collection).
func (c *Collection[M]) Create(ctx context.Context) error {
	cur, err := c.db.ListCollections(ctx, bson.D{{Key: "name", Value: c.coll.Name()}})
	if err != nil {
		return err
	}
	var infos []bson.Raw
	if err := cur.All(ctx, &infos); err != nil {
		return err
	}
	if len(infos) > 0 {
		info := infos[0]
		ts, ok := info.Lookup("options", "timeseries").DocumentOK()
		if !ok {
			return fmt.Errorf("timeseries: %s exists and is not a time series collection (none can be converted into one): %w", c.coll.Name(), ErrExists)
		}
		tf, _ := ts.Lookup("timeField").StringValueOK()
		mf, _ := ts.Lookup("metaField").StringValueOK()
		if tf != c.timeField || mf != c.metaField {
			return fmt.Errorf("timeseries: %s exists with timeField %q and metaField %q (fixed at creation): %w", c.coll.Name(), tf, mf, ErrExists)
		}
		return nil
	}
	return c.db.CreateCollection(ctx, c.coll.Name(), c.Options())
}

// EnsureIndexes checks Config.Indexes against the restrictions (see
// CheckIndex) and creates them, with {<meta>: 1, <time>: 1} when there is
// a meta field (which MongoDB 6.3+ creates itself for a new collection).
func (c *Collection[M]) EnsureIndexes(ctx context.Context) error {
	var models []mongo.IndexModel
	if c.metaField != "" {
		models = append(models, mongo.IndexModel{Keys: bson.D{{Key: c.metaField, Value: 1}, {Key: c.timeField, Value: 1}}})
	}
	for _, m := range c.cfg.Indexes {
		if err := c.CheckIndex(m); err != nil {
			return err
		}
		models = append(models, m)
	}
	if len(models) == 0 {
		return nil
	}
	_, err := c.coll.Indexes().CreateMany(ctx, models)
	return err
}
