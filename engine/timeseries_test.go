package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// createTS creates a time series {timeField: t, metaField: m} named name.
func createTS(t *testing.T, db *mongo.Database, name string, extra ...bson.E) {
	t.Helper()
	cmd := bson.D{{Key: "create", Value: name}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "m"}}}}
	cmd = append(cmd, extra...)
	if err := db.RunCommand(ctxT(t), cmd).Err(); err != nil {
		t.Fatal(err)
	}
}

// buckets returns the bucket documents of time series name.
func buckets(t *testing.T, db *mongo.Database, name string) []bson.Raw {
	t.Helper()
	cur, err := db.Collection("system.buckets."+name).Find(ctxT(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctxT(t), &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestTimeseriesConcurrentInserts inserts from many goroutines at once
// and checks that no measurement is lost or doubled and that every bucket
// keeps the closing rules.
func TestTimeseriesConcurrentInserts(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	createTS(t, db, "ts")
	c := db.Collection("ts")
	ctx := ctxT(t)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	const workers, per = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i += 3 {
				var docs []any
				for j := i; j < i+3; j++ {
					id := w*per + j
					docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "t", Value: base.Add(time.Duration(id) * time.Second)}, {Key: "m", Value: id % 3}, {Key: "v", Value: id}})
				}
				if _, err := c.InsertMany(ctx, docs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n, err := c.CountDocuments(ctx, bson.D{})
	if err != nil || n != workers*per {
		t.Fatalf("count = %d, %v; want %d", n, err, workers*per)
	}
	var distinct []int32
	if err := c.Distinct(ctx, "_id", bson.D{}).Decode(&distinct); err != nil || len(distinct) != workers*per {
		t.Fatalf("distinct _id: %d values, %v", len(distinct), err)
	}
	total := 0
	for _, b := range buckets(t, db, "ts") {
		data := b.Lookup("data", "t")
		min := b.Lookup("control", "min", "t").Time()
		max := b.Lookup("control", "max", "t").Time()
		if max.Sub(min) >= time.Hour {
			t.Fatalf("bucket spans %v", max.Sub(min))
		}
		if data.Type == bson.TypeEmbeddedDocument {
			elems, _ := data.Document().Elements()
			total += len(elems)
		} else {
			total += int(b.Lookup("control", "count").Int32())
		}
	}
	if total != workers*per {
		t.Fatalf("buckets hold %d measurements, want %d", total, workers*per)
	}
}

// TestTimeseriesBucketsCloseAt1000 checks the count rule: 2,500
// measurements of one series an hour's worth apart fill two compressed
// buckets of 1,000 and leave an open one of 500.
func TestTimeseriesBucketsCloseAt1000(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	createTS(t, db, "ts")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 2500 {
		docs = append(docs, bson.D{{Key: "t", Value: base.Add(time.Duration(i) * time.Second)}, {Key: "m", Value: "a"}, {Key: "v", Value: float64(i) / 10}})
	}
	if _, err := db.Collection("ts").InsertMany(ctxT(t), docs); err != nil {
		t.Fatal(err)
	}
	var v1, v2 int
	for _, b := range buckets(t, db, "ts") {
		switch b.Lookup("control", "version").Int32() {
		case 1:
			v1++
		case 2:
			v2++
			if n := b.Lookup("control", "count").Int32(); n != 1000 {
				t.Fatalf("compressed bucket holds %d", n)
			}
		}
	}
	if v1 != 1 || v2 != 2 {
		t.Fatalf("%d open and %d compressed buckets, want 1 and 2", v1, v2)
	}
	var st bson.Raw
	if err := db.RunCommand(ctxT(t), bson.D{{Key: "collStats", Value: "ts"}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Lookup("timeseries", "bucketCount").Int64() != 3 || st.Lookup("timeseries", "numBucketsClosedDueToCount").Int64() != 2 || st.Lookup("timeseries", "numCompressedBuckets").Int64() != 2 {
		t.Fatalf("collStats timeseries = %v", st.Lookup("timeseries"))
	}
	// Reads see all of them, in time order for one series.
	cur, err := db.Collection("ts").Find(ctxT(t), bson.D{{Key: "m", Value: "a"}}, options.Find().SetSort(bson.D{{Key: "t", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.Raw
	if err := cur.All(ctxT(t), &got); err != nil || len(got) != 2500 || got[2499].Lookup("v").Double() != 249.9 {
		t.Fatalf("find: %d docs, %v", len(got), err)
	}
}

// TestTimeseriesTTL checks whole-bucket expiry by the TTL monitor.
func TestTimeseriesTTL(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{TTLInterval: 20 * time.Millisecond})
	db := client.Database("test")
	createTS(t, db, "ts", bson.E{Key: "expireAfterSeconds", Value: 3600})
	now := time.Now()
	_, err := db.Collection("ts").InsertMany(ctxT(t), []any{
		bson.D{{Key: "t", Value: now.Add(-3 * time.Hour)}, {Key: "m", Value: "old"}},
		bson.D{{Key: "t", Value: now.Add(-3*time.Hour + time.Minute)}, {Key: "m", Value: "old"}},
		bson.D{{Key: "t", Value: now}, {Key: "m", Value: "new"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for range 1000 {
		n, _ = db.Collection("ts").CountDocuments(ctxT(t), bson.D{})
		if n == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n != 1 || len(buckets(t, db, "ts")) != 1 {
		t.Fatalf("after TTL: %d measurements", n)
	}
}

// TestTimeseriesRename checks that neither half of a time series can be
// renamed.
func TestTimeseriesRename(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{})
	db := client.Database("test")
	createTS(t, db, "ts")
	admin := client.Database("admin")
	err := admin.RunCommand(ctxT(t), bson.D{{Key: "renameCollection", Value: "test.ts"}, {Key: "to", Value: "test.ts2"}}).Err()
	wantCode(t, err, 166, "CommandNotSupportedOnView")
	err = admin.RunCommand(ctxT(t), bson.D{{Key: "renameCollection", Value: "test.system.buckets.ts"}, {Key: "to", Value: "test.x"}}).Err()
	wantCode(t, err, 20, "IllegalOperation")
	if err := db.Collection("ts").Drop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	names, _ := db.ListCollectionNames(ctxT(t), bson.D{})
	if len(names) != 0 {
		t.Fatalf("after drop: %v", names)
	}
}

// tsStorage inserts n measurements of sensors series, one reading a
// second each, into a time series and into a plain collection, and
// returns both storageSizes.
func tsStorage(t testing.TB, db *mongo.Database, n, sensors int) (ts, plain int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "sensor"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 10000
	for i := 0; i < n; i += batch {
		var docs []any
		for j := i; j < i+batch && j < n; j++ {
			s := j % sensors
			sec := j / sensors
			docs = append(docs, bson.D{
				{Key: "_id", Value: bson.NewObjectID()},
				{Key: "t", Value: base.Add(time.Duration(sec) * time.Second)},
				{Key: "sensor", Value: bson.D{{Key: "id", Value: s}, {Key: "kind", Value: "temperature"}}},
				{Key: "temp", Value: float64(200+(sec%50)-(s%7)) / 10},
			})
		}
		for _, coll := range []string{"ts", "plain"} {
			start := time.Now()
			if _, err := db.Collection(coll).InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() && i%200000 == 0 {
				t.Logf("%s: %d documents in %v", coll, len(docs), time.Since(start))
			}
		}
	}
	size := func(coll string) int64 {
		var st struct {
			StorageSize int64 `bson:"storageSize"`
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: coll}}).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.StorageSize
	}
	return size("ts"), size("plain")
}

// TestTimeseriesStorageRatio checks the storage target on 20,000
// measurements: buckets at least 5× smaller than one document each.
func TestTimeseriesStorageRatio(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ts, plain := tsStorage(t, db, 20000, 10)
	if ts*5 > plain {
		t.Fatalf("time series %d bytes, plain %d bytes: ratio %.1f", ts, plain, float64(plain)/float64(ts))
	}
	t.Logf("20k measurements: time series %d bytes, plain %d bytes, ratio %.1f", ts, plain, float64(plain)/float64(ts))
}

// TestTimeseriesRangeExaminesBuckets checks that a one-hour range on one
// sensor examines buckets through the {meta, time} index, not
// measurements: [10 min, 70 min) overlaps 5 buckets of 1,000 s.
func TestTimeseriesRangeExaminesBuckets(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	tsStorage(t, db, 9600, 2) // 2 sensors, 4,800 s each
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	filter := bson.D{{Key: "sensor", Value: bson.D{{Key: "id", Value: 1}, {Key: "kind", Value: "temperature"}}}, {Key: "t", Value: bson.D{{Key: "$gte", Value: base.Add(10 * time.Minute)}, {Key: "$lt", Value: base.Add(70 * time.Minute)}}}}
	n, err := db.Collection("ts").CountDocuments(ctxT(t), filter)
	if err != nil || n != 3600 {
		t.Fatalf("count = %d, %v", n, err)
	}
	var ex bson.Raw
	err = db.RunCommand(ctxT(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "ts"}, {Key: "filter", Value: filter}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&ex)
	if err != nil {
		t.Fatal(err)
	}
	cursor := ex.Lookup("stages", "0", "$cursor")
	examined := cursor.Document().Lookup("executionStats", "totalDocsExamined").AsInt64()
	stage := cursor.Document().Lookup("queryPlanner", "winningPlan", "inputStage", "stage").StringValue()
	if stage != "IXSCAN" || examined > 5 {
		t.Fatalf("winning plan %s examined %d documents:\n%v", stage, examined, ex)
	}
	t.Logf("one hour of one sensor: %d measurements, %d buckets examined", n, examined)
}

// BenchmarkTimeseriesStorage measures the storage of measurements as
// buckets and as one document each (collStats storageSize).
func BenchmarkTimeseriesStorage(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(fmt.Sprintf("measurements=%d", n), func(b *testing.B) {
			for range b.N {
				_, client := testenv.Engine(b, engine.Options{})
				ts, plain := tsStorage(b, client.Database("test"), n, 100)
				b.ReportMetric(float64(ts), "ts-bytes")
				b.ReportMetric(float64(plain), "plain-bytes")
				b.ReportMetric(float64(plain)/float64(ts), "ratio")
			}
		})
	}
}

// TestTimeseriesCatalogShape checks what listCollections and listIndexes
// show of a time series, including the divergences: no system.views, an
// _id index listed on system.buckets.<name>, compressed columns as BinData
// subtype 0x80.
func TestTimeseriesCatalogShape(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	createTS(t, db, "ts", bson.E{Key: "expireAfterSeconds", Value: 60})
	cur, err := db.ListCollections(ctxT(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var infos []bson.Raw
	if err := cur.All(ctxT(t), &infos); err != nil {
		t.Fatal(err)
	}
	byName := map[string]bson.Raw{}
	for _, in := range infos {
		byName[in.Lookup("name").StringValue()] = in
	}
	if len(byName) != 2 || byName["system.views"] != nil {
		t.Fatalf("collections: %v", infos)
	}
	b := byName["system.buckets.ts"]
	if b.Lookup("type").StringValue() != "collection" || !b.Lookup("options", "clusteredIndex").Boolean() ||
		b.Lookup("options", "expireAfterSeconds").Int64() != 60 || b.Lookup("options", "timeseries", "timeField").StringValue() != "t" ||
		b.Lookup("options", "validator", "$jsonSchema").Type != bson.TypeEmbeddedDocument || b.Lookup("info", "uuid").Type != bson.TypeBinary {
		t.Fatalf("buckets entry: %v", b)
	}
	if _, err := b.LookupErr("idIndex"); err == nil {
		t.Fatalf("clustered buckets entry has an idIndex: %v", b)
	}
	specs, err := db.Collection("system.buckets.ts").Indexes().ListSpecifications(ctxT(t))
	if err != nil || len(specs) != 2 || specs[0].Name != "_id_" || specs[1].Name != "m_1_t_1" {
		t.Fatalf("buckets indexes: %v, %v", specs, err)
	}
	var docs []any
	for i := range 1000 {
		docs = append(docs, bson.D{{Key: "t", Value: time.Now().Add(time.Duration(i) * time.Millisecond)}, {Key: "m", Value: 1}})
	}
	if _, err := db.Collection("ts").InsertMany(ctxT(t), docs); err != nil {
		t.Fatal(err)
	}
	bs := buckets(t, db, "ts")
	if len(bs) != 1 || bs[0].Lookup("control", "version").Int32() != 2 {
		t.Fatalf("buckets: %v", bs)
	}
	if st, _ := bs[0].Lookup("data", "t").Binary(); st != 0x80 {
		t.Fatalf("compressed column subtype %#x", st)
	}
}

// TestTimeseriesReopensBucketsAfterRestart checks that a time series
// survives Close/Open and that inserts after the restart go on filling
// the open bucket of their series, as mongod 7.0 reopens buckets.
func TestTimeseriesReopensBucketsAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	insert := func(db *mongo.Database, from int) {
		var docs []any
		for i := from; i < from+10; i++ {
			docs = append(docs, bson.D{{Key: "t", Value: base.Add(time.Duration(i) * time.Second)}, {Key: "m", Value: bson.D{{Key: "s", Value: 1}}}, {Key: "v", Value: i}})
		}
		if _, err := db.Collection("ts").InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	open := func() (*engine.DB, *mongo.Database) {
		db, err := engine.Open(ctx, engine.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		client, err := testenv.Connect(db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Disconnect(ctx) })
		return db, client.Database("test")
	}
	db, tdb := open()
	createTS(t, tdb, "ts")
	insert(tdb, 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, tdb = open()
	defer db.Close()
	insert(tdb, 10)
	bs := buckets(t, tdb, "ts")
	if len(bs) != 1 {
		t.Fatalf("%d buckets after the restart, want 1", len(bs))
	}
	if n, _ := tdb.Collection("ts").CountDocuments(ctx, bson.D{{Key: "m.s", Value: 1}}); n != 20 {
		t.Fatalf("count = %d", n)
	}
}

// TestTimeseriesNoMetaRangeUsesID checks that without a metaField a time
// range scans the buckets' _id index, whose ObjectId timestamps are the
// buckets' minimum times.
func TestTimeseriesNoMetaRangeUsesID(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	if err := db.RunCommand(ctxT(t), bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 10000 {
		docs = append(docs, bson.D{{Key: "t", Value: base.Add(time.Duration(i) * time.Second)}, {Key: "v", Value: i}})
	}
	if _, err := db.Collection("ts").InsertMany(ctxT(t), docs); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "t", Value: bson.D{{Key: "$gte", Value: base.Add(2 * time.Hour)}, {Key: "$lt", Value: base.Add(2*time.Hour + time.Minute)}}}}
	n, err := db.Collection("ts").CountDocuments(ctxT(t), filter)
	if err != nil || n != 60 {
		t.Fatalf("count = %d, %v", n, err)
	}
	var ex bson.Raw
	if err := db.RunCommand(ctxT(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "ts"}, {Key: "filter", Value: filter}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	cursor := ex.Lookup("stages", "0", "$cursor").Document()
	ix, _ := cursor.Lookup("queryPlanner", "winningPlan", "inputStage", "indexName").StringValueOK()
	if ix != "_id_" || cursor.Lookup("executionStats", "totalDocsExamined").AsInt64() > 5 {
		t.Fatalf("plan: %v", cursor.Lookup("queryPlanner", "winningPlan"))
	}
}

// TestTimeseriesHintExplain checks that a hint in measurement terms
// picks the translated index on the buckets (explain shows its name and
// bucket key pattern) for find, count and aggregate.
func TestTimeseriesHintExplain(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	createTS(t, db, "ts")
	if err := db.RunCommand(ctxT(t), bson.D{{Key: "createIndexes", Value: "ts"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: -1}}}, {Key: "name", Value: "v_-1"}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "ts"}, {Key: "filter", Value: bson.D{{Key: "m", Value: "a"}}}, {Key: "hint", Value: bson.D{{Key: "v", Value: -1}}}},
		{{Key: "count", Value: "ts"}, {Key: "query", Value: bson.D{{Key: "m", Value: "a"}}}, {Key: "hint", Value: bson.D{{Key: "v", Value: -1}}}},
		{{Key: "aggregate", Value: "ts"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "m", Value: "a"}}}}}}, {Key: "hint", Value: bson.D{{Key: "v", Value: -1}}}, {Key: "cursor", Value: bson.D{}}},
	} {
		var ex bson.Raw
		if err := db.RunCommand(ctxT(t), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&ex); err != nil {
			t.Fatalf("%v: %v", cmd[0].Key, err)
		}
		ix := ex.Lookup("stages", "0", "$cursor", "queryPlanner", "winningPlan", "inputStage")
		if ix.Document().Lookup("indexName").StringValue() != "v_-1" || ix.Document().Lookup("keyPattern").Document().String() != `{"control.max.v": {"$numberInt":"-1"},"control.min.v": {"$numberInt":"-1"}}` {
			t.Fatalf("%v: winning plan %v", cmd[0].Key, ex.Lookup("stages", "0", "$cursor", "queryPlanner", "winningPlan"))
		}
	}
}

// TestTimeseriesPartialTTLIndex checks a TTL index on the time field with
// a partialFilterExpression on the metaField (mongod 7.0): the TTL
// monitor removes the old buckets of the matching series only.
func TestTimeseriesPartialTTLIndex(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{TTLInterval: 20 * time.Millisecond})
	db := client.Database("test")
	createTS(t, db, "ts")
	err := db.RunCommand(ctxT(t), bson.D{{Key: "createIndexes", Value: "ts"}, {Key: "indexes", Value: bson.A{bson.D{
		{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "ttl"},
		{Key: "expireAfterSeconds", Value: 3600}, {Key: "partialFilterExpression", Value: bson.D{{Key: "m", Value: "tmp"}}},
	}}}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_, err = db.Collection("ts").InsertMany(ctxT(t), []any{
		bson.D{{Key: "t", Value: now.Add(-3 * time.Hour)}, {Key: "m", Value: "tmp"}},
		bson.D{{Key: "t", Value: now.Add(-3 * time.Hour)}, {Key: "m", Value: "keep"}},
		bson.D{{Key: "t", Value: now}, {Key: "m", Value: "tmp"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for range 1000 {
		n, _ = db.Collection("ts").CountDocuments(ctxT(t), bson.D{})
		if n == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n != 2 {
		t.Fatalf("after TTL: %d measurements, want 2", n)
	}
	if k, _ := db.Collection("ts").CountDocuments(ctxT(t), bson.D{{Key: "m", Value: "keep"}}); k != 1 {
		t.Fatalf("the series outside the filter lost measurements: %d", k)
	}
}

// TestTimeseriesReopensOlderBucketAfterRestart checks query-based
// reopening after a restart: a measurement in the range of an
// uncompressed bucket that is not the newest of its series joins it.
func TestTimeseriesReopensOlderBucketAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	insert := func(db *mongo.Database, at time.Duration) {
		if _, err := db.Collection("ts").InsertOne(ctx, bson.D{{Key: "t", Value: base.Add(at)}, {Key: "m", Value: "s"}}); err != nil {
			t.Fatal(err)
		}
	}
	open := func() (*engine.DB, *mongo.Database) {
		db, err := engine.Open(ctx, engine.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		client, err := testenv.Connect(db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Disconnect(ctx) })
		return db, client.Database("test")
	}
	db, tdb := open()
	createTS(t, tdb, "ts")
	insert(tdb, time.Hour)      // bucket A: [01:00, 02:00)
	insert(tdb, 30*time.Minute) // back in time: A archived, bucket B: [00:30, 01:30)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, tdb = open()
	defer db.Close()
	insert(tdb, 100*time.Minute) // 01:40: only A's range holds it
	bs := buckets(t, tdb, "ts")
	if len(bs) != 2 {
		t.Fatalf("%d buckets after the restart, want 2", len(bs))
	}
	for _, b := range bs {
		if b.Lookup("control", "min", "t").Time().Equal(base.Add(time.Hour)) && !b.Lookup("control", "max", "t").Time().Equal(base.Add(100*time.Minute)) {
			t.Fatalf("bucket A was not reopened: %v", b)
		}
	}
}
