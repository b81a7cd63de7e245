package timeseries

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCreate checks the collection the declared type creates, as
// listCollections shows it, that Create is idempotent, and that an
// existing collection of another kind is refused.
func TestCreate(t *testing.T) {
	ctx := context.Background()
	c, db := readings(t, Config{Granularity: Minutes, ExpireAfter: 24 * time.Hour})
	in := info(t, db, "readings")
	if in.Lookup("type").StringValue() != "timeseries" {
		t.Fatalf("info %v", in)
	}
	ts := in.Lookup("options", "timeseries")
	if ts.Document().Lookup("timeField").StringValue() != "ts" || ts.Document().Lookup("metaField").StringValue() != "meta" ||
		ts.Document().Lookup("granularity").StringValue() != "minutes" || ts.Document().Lookup("bucketMaxSpanSeconds").AsInt64() != 86400 {
		t.Errorf("timeseries options %v", ts)
	}
	if e := in.Lookup("options", "expireAfterSeconds").AsInt64(); e != 86400 {
		t.Errorf("expireAfterSeconds %d", e)
	}
	if err := c.Create(ctx); err != nil {
		t.Errorf("second Create: %v", err)
	}
	if _, err := db.Collection("plain").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	p, _ := New[Reading](db, "plain", Config{})
	if err := p.Create(ctx); !errors.Is(err, ErrExists) {
		t.Errorf("over a plain collection: %v", err)
	}
	type other struct {
		At time.Time `bson:"at" timeseries:"time"`
	}
	o, _ := New[other](db, "readings", Config{})
	if err := o.Create(ctx); !errors.Is(err, ErrExists) {
		t.Errorf("other fields: %v", err)
	}
	custom, _ := New[Reading](db, "custom", Config{BucketMaxSpan: 6 * time.Hour, BucketRounding: 6 * time.Hour})
	if err := custom.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if got := info(t, db, "custom").Lookup("options", "timeseries", "bucketRoundingSeconds").AsInt64(); got != 21600 {
		t.Errorf("custom rounding %d", got)
	}
}

// TestInsertRange checks that measurements read back as stored, by
// series and time range, oldest first, and that Stats sees them bucketed.
func TestInsertRange(t *testing.T) {
	ctx := context.Background()
	c, _ := readings(t, Config{})
	if err := c.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	rs := series(3, 120, 10*time.Second)
	if err := c.InsertMany(ctx, rs); err != nil {
		t.Fatal(err)
	}
	got, err := c.Range(ctx, Sensor{SensorID: 2, Type: "temperature"}, t0.Add(time.Minute), t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("%d readings", len(got))
	}
	for i, r := range got {
		if !r.TS.Equal(t0.Add(time.Minute+time.Duration(i)*10*time.Second)) || r.Meta.SensorID != 2 || r.Temp != float64((6+i)%30)+0.2 {
			t.Errorf("reading %d: %+v", i, r)
		}
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Measurements != 360 || st.Buckets < 3 || st.Buckets > 6 || st.OpenedOnNewMeta < 3 {
		t.Errorf("stats %+v", st)
	}
}

// TestRestrictionsBeforeTheServer checks each restriction: the package's
// error (wrapping ErrRestriction) comes before any write, and the server
// itself refuses the same operation, so the check is not stricter than
// MongoDB where the server has an answer.
func TestRestrictionsBeforeTheServer(t *testing.T) {
	ctx := context.Background()
	c, db := readings(t, Config{})
	coll := c.Collection()
	if err := c.Insert(ctx, Reading{Meta: Sensor{SensorID: 1}}); !errors.Is(err, ErrRestriction) {
		t.Errorf("zero time: %v", err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "meta", Value: 1}}); err == nil {
		t.Error("server accepted a measurement without time")
	}
	unique := mongo.IndexModel{Keys: bson.D{{Key: "temp", Value: 1}}, Options: options.Index().SetUnique(true)}
	if err := c.CheckIndex(unique); !errors.Is(err, ErrRestriction) {
		t.Errorf("unique: %v", err)
	}
	var ce mongo.CommandError
	if _, err := coll.Indexes().CreateOne(ctx, unique); !errors.As(err, &ce) || ce.Code != 72 {
		t.Errorf("server on unique: %v", err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "note", Value: "text"}}},
		{Keys: bson.D{{Key: "temp", Value: 1}}, Options: options.Index().SetSparse(true)},
		{Keys: bson.D{{Key: "ts", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(60)},
	} {
		if err := c.CheckIndex(m); !errors.Is(err, ErrRestriction) {
			t.Errorf("%v: %v", m.Keys, err)
		}
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "temp", Value: 1}}},
		{Keys: bson.D{{Key: "meta.sensorId", Value: 1}}, Options: options.Index().SetSparse(true)},
		{Keys: bson.D{{Key: "temp", Value: 1}}, Options: options.Index().SetPartialFilterExpression(bson.D{{Key: "temp", Value: bson.D{{Key: "$gt", Value: 0}}}})},
	} {
		if err := c.CheckIndex(m); err != nil {
			t.Errorf("%v refused: %v", m.Keys, err)
		}
	}

	if err := c.InsertMany(ctx, series(2, 10, time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct{ filter, update bson.D }{
		{bson.D{{Key: "meta.sensorId", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "temp", Value: 0}}}}},
		{bson.D{{Key: "temp", Value: 1.1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "meta.type", Value: "t"}}}}},
		{bson.D{{Key: "meta.sensorId", Value: 1}}, bson.D{{Key: "meta", Value: 1}}},
		{bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "meta.sensorId", Value: 1}}, bson.D{{Key: "ts", Value: t0}}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "meta.type", Value: "t"}}}}},
		{bson.D{}, bson.D{{Key: "$rename", Value: bson.D{{Key: "meta.type", Value: "kind"}}}}},
	} {
		if _, err := c.UpdateMeta(ctx, u.filter, u.update); !errors.Is(err, ErrRestriction) {
			t.Errorf("%v %v: %v", u.filter, u.update, err)
		}
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "meta.sensorId", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "temp", Value: 0}}}}); err == nil {
		t.Error("server accepted updateOne")
	}
	n, err := c.UpdateMeta(ctx, bson.D{{Key: "meta.sensorId", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "meta.type", Value: "celsius"}}}})
	if err != nil || n != 10 {
		t.Fatalf("meta update: %d %v", n, err)
	}
	if k, _ := coll.CountDocuments(ctx, bson.D{{Key: "meta.type", Value: "celsius"}}); k != 10 {
		t.Errorf("%d relabelled", k)
	}
	d, err := c.Delete(ctx, bson.D{{Key: "temp", Value: bson.D{{Key: "$lt", Value: 2}}}})
	if err != nil || d != 4 {
		t.Errorf("delete %d %v", d, err)
	}
	type noMeta struct {
		At time.Time `bson:"at" timeseries:"time"`
		V  int       `bson:"v"`
	}
	nm, err := New[noMeta](db, "nometa", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nm.UpdateMeta(ctx, nil, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}}); !errors.Is(err, ErrRestriction) {
		t.Errorf("no meta: %v", err)
	}
}

// TestDeclarationErrors checks the measurement types and Configs New
// refuses.
func TestDeclarationErrors(t *testing.T) {
	db := testenvDB(t)
	type noTime struct {
		V int `bson:"v"`
	}
	type badTime struct {
		At string `bson:"at" timeseries:"time"`
	}
	type idMeta struct {
		At time.Time `bson:"at" timeseries:"time"`
		ID int       `bson:"_id" timeseries:"meta"`
	}
	type arrayMeta struct {
		At   time.Time `bson:"at" timeseries:"time"`
		Tags []string  `bson:"tags" timeseries:"meta"`
	}
	type twoTimes struct {
		A time.Time `bson:"a" timeseries:"time"`
		B time.Time `bson:"b" timeseries:"time"`
	}
	errs := []error{}
	_, err := New[noTime](db, "x", Config{})
	errs = append(errs, err)
	_, err = New[badTime](db, "x", Config{})
	errs = append(errs, err)
	_, err = New[idMeta](db, "x", Config{})
	errs = append(errs, err)
	_, err = New[arrayMeta](db, "x", Config{})
	errs = append(errs, err)
	_, err = New[twoTimes](db, "x", Config{})
	errs = append(errs, err)
	for _, c := range []Config{
		{Granularity: "days"},
		{Granularity: Seconds, BucketMaxSpan: time.Hour, BucketRounding: time.Hour},
		{BucketMaxSpan: time.Hour, BucketRounding: time.Minute},
		{BucketMaxSpan: 1500 * time.Millisecond, BucketRounding: 1500 * time.Millisecond},
		{ExpireAfter: -time.Second},
	} {
		_, err = New[Reading](db, "x", c)
		errs = append(errs, err)
	}
	for i, err := range errs {
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

// TestDuplicatesAccepted checks the consequence of the missing unique
// index the docs warn about: the same _id and the same measurement
// inserted twice are both stored.
func TestDuplicatesAccepted(t *testing.T) {
	ctx := context.Background()
	c, _ := readings(t, Config{})
	type withID struct {
		ID   int       `bson:"_id"`
		TS   time.Time `bson:"ts"`
		Meta Sensor    `bson:"meta"`
	}
	for range 2 {
		if _, err := c.Collection().InsertOne(ctx, withID{ID: 1, TS: t0, Meta: Sensor{SensorID: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := c.Collection().CountDocuments(ctx, bson.D{{Key: "_id", Value: 1}}); n != 2 {
		t.Errorf("%d documents with _id 1, want 2", n)
	}
}
