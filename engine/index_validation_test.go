package engine_test

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCreateIndexRejectsAsMongod70 checks index specifications mongod 7.0
// refuses: a name holding a NUL byte, and TTL options that are not
// numeric, are negative, or sit on a compound or _id index.
func TestCreateIndexRejectsAsMongod70(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	cases := []struct {
		name string
		spec bson.D
		code int
	}{
		{"nul in name", bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a\x00b"}}, 67},
		{"ttl string", bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "t1"}, {Key: "expireAfterSeconds", Value: "60"}}, 67},
		{"ttl negative", bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "t2"}, {Key: "expireAfterSeconds", Value: -1}}, 67},
		{"ttl NaN", bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "t3"}, {Key: "expireAfterSeconds", Value: math.NaN()}}, 67},
		{"ttl compound", bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}, {Key: "u", Value: 1}}}, {Key: "name", Value: "t4"}, {Key: "expireAfterSeconds", Value: 60}}, 67},
		{"ttl on _id", bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}, {Key: "expireAfterSeconds", Value: 60}}, 197},
		{"ttl too large", bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "t5"}, {Key: "expireAfterSeconds", Value: int64(1) << 40}}, 67},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{c.spec}}}).Err()
			wantCode(t, err, c.code, "")
		})
	}
	// A valid TTL index still works.
	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "ttl"}, {Key: "expireAfterSeconds", Value: 0}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestDatabaseDifferCase checks that a database whose name differs only in
// case from an existing one cannot be created (DatabaseDifferCase, 13297),
// by insert or create, while the existing one keeps working.
func TestDatabaseDifferCase(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	client := db.Client()
	other := client.Database(flipCase(db.Name()))
	_, err := other.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	wantCode(t, err, 13297, "DatabaseDifferCase")
	err = other.CreateCollection(ctx, "d")
	wantCode(t, err, 13297, "DatabaseDifferCase")
	_, err = other.Collection("c").UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
	wantCode(t, err, 13297, "DatabaseDifferCase")
	err = other.Collection("c").FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}, options.FindOneAndUpdate().SetUpsert(true)).Err()
	wantCode(t, err, 13297, "DatabaseDifferCase")
	_, err = other.Collection("c").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
	wantCode(t, err, 13297, "DatabaseDifferCase")
	err = client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: db.Name() + ".c"}, {Key: "to", Value: other.Name() + ".c"}}).Err()
	wantCode(t, err, 13297, "DatabaseDifferCase")
	if n, _ := other.Collection("c").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("the clashing database holds %d documents", n)
	}
	if _, err := db.Collection("c2").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatalf("the existing database: %v", err)
	}
}

func flipCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}
