package engine_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// studentSchema is the validator of the manual's schema validation
// tutorial, shortened.
var studentSchema = bson.D{{Key: "$jsonSchema", Value: bson.D{
	{Key: "bsonType", Value: "object"},
	{Key: "required", Value: bson.A{"name", "year"}},
	{Key: "properties", Value: bson.D{
		{Key: "name", Value: bson.D{{Key: "bsonType", Value: "string"}}},
		{Key: "year", Value: bson.D{{Key: "bsonType", Value: "int"}, {Key: "minimum", Value: 2017}}},
	}},
}}}

// TestValidationWriteExceptionCarriesErrInfo checks that a rejected insert
// reaches the driver as a WriteException with code 121 and the errInfo
// details MongoDB 5.0+ sends.
func TestValidationWriteExceptionCarriesErrInfo(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	if err := db.CreateCollection(ctx, "s", options.CreateCollection().SetValidator(studentSchema)); err != nil {
		t.Fatal(err)
	}
	_, err := db.Collection("s").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: 7}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 {
		t.Fatalf("insert: %v", err)
	}
	info := we.WriteErrors[0].Details
	if id := info.Lookup("failingDocumentId"); id.Int32() != 1 {
		t.Fatalf("failingDocumentId = %v", id)
	}
	if op := info.Lookup("details", "operatorName").StringValue(); op != "$jsonSchema" {
		t.Fatalf("operatorName = %q in %v", op, info)
	}
	rules, _ := info.Lookup("details", "schemaRulesNotSatisfied").Array().Values()
	if len(rules) != 2 {
		t.Fatalf("schemaRulesNotSatisfied = %v", rules)
	}
	// findAndModify fails as a command error with errInfo.
	_, err = db.Collection("s").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "name", Value: "a"}, {Key: "year", Value: int32(2020)}})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Collection("s").FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "year", Value: int32(1)}}}}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 121 || ce.Name != "DocumentValidationFailure" {
		t.Fatalf("findAndModify: %v", err)
	}
	if _, err := ce.Raw.LookupErr("errInfo", "details"); err != nil {
		t.Fatalf("findAndModify errInfo: %v", ce.Raw)
	}
	// Validators stay out of the internal databases.
	err = db.Client().Database("config").CreateCollection(ctx, "v", options.CreateCollection().SetValidator(studentSchema))
	wantCode(t, err, 72, "InvalidOptions")
}

// TestValidationRulesSurviveRestart checks that an on-disk database keeps
// its validator, level and action across Close and Open.
func TestValidationRulesSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	open := func() (*engine.DB, *mongo.Client) {
		db, err := engine.Open(ctx, engine.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		client, err := testenv.Connect(db)
		if err != nil {
			t.Fatal(err)
		}
		return db, client
	}
	db, client := open()
	opts := options.CreateCollection().SetValidator(studentSchema).SetValidationLevel("moderate")
	if err := client.Database("d").CreateCollection(ctx, "s", opts); err != nil {
		t.Fatal(err)
	}
	client.Disconnect(ctx)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, client = open()
	defer db.Close()
	defer client.Disconnect(ctx)
	_, err := client.Database("d").Collection("s").InsertOne(ctx, bson.D{{Key: "name", Value: "x"}})
	wantCode(t, err, 121, "DocumentValidationFailure")
	specs, err := client.Database("d").ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "s"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections: %v %v", specs, err)
	}
	if lvl := specs[0].Options.Lookup("validationLevel").StringValue(); lvl != "moderate" {
		t.Fatalf("validationLevel after reopen = %q", lvl)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestValidationActionWarnLogs checks that validationAction "warn" lets
// an invalid document in and logs the failure through the engine's
// logger.
func TestValidationActionWarnLogs(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	_, client := testenv.Engine(t, engine.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	db := client.Database("test")
	ctx := ctxT(t)
	opts := options.CreateCollection().SetValidator(studentSchema).SetValidationAction("warn")
	if err := db.CreateCollection(ctx, "w", opts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("w").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("warn must let the write through: %v", err)
	}
	log := buf.String()
	if !strings.Contains(log, "Document would fail validation") || !strings.Contains(log, "missingProperties") {
		t.Fatalf("log = %q", log)
	}
}
