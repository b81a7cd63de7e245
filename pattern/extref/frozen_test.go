package extref

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
)

// TestConfigFrozenFilter is the regression test for issue 10: a Frozen
// filter with an unknown operator or a malformed shape was accepted by New,
// and then every fan-out, Sync and Verify failed on the server. New must
// refuse it, naming the problem.
func TestConfigFrozenFilter(t *testing.T) {
	db := testenv.Database(t)
	d := func(k string, v any) bson.D { return bson.D{{Key: k, Value: v}} }
	bad := []struct {
		name   string
		frozen bson.D
		want   string
	}{
		{"unknown operator", d("status", d("$inn", bson.A{"delivered"})), "unknown operator $inn"},
		{"unknown operator not first", d("status", bson.D{{Key: "$ne", Value: "x"}, {Key: "$foo", Value: 1}}), "unknown operator $foo"},
		{"second field", bson.D{{Key: "status", Value: "delivered"}, {Key: "total", Value: d("$gtt", 3)}}, "unknown operator $gtt"},
		{"unknown top level", d("$where2", "x"), "unknown top-level operator $where2"},
		{"in not array", d("status", d("$in", "delivered")), "$in needs an array"},
		{"nin not array", d("status", d("$nin", 3)), "$nin needs an array"},
		{"in of operator", d("status", d("$in", bson.A{d("$gt", 1)})), "$in cannot hold an operator"},
		{"and not array", d("$and", d("status", "x")), "$and needs a non-empty array"},
		{"or empty", d("$or", bson.A{}), "$or needs a non-empty array"},
		{"nor of scalar", d("$nor", bson.A{1}), "$nor needs an array of documents"},
		{"nested unknown", d("$or", bson.A{d("status", "x"), d("total", d("$lessThan", 3))}), "unknown operator $lessThan"},
		{"size negative", d("items", d("$size", -1)), "$size"},
		{"size fraction", d("items", d("$size", 1.5)), "$size"},
		{"size string", d("items", d("$size", "2")), "$size"},
		{"mod shape", d("n", d("$mod", bson.A{2})), "$mod"},
		{"mod zero", d("n", d("$mod", bson.A{0, 1})), "$mod"},
		{"type alias", d("n", d("$type", "integer")), "$type"},
		{"type code", d("n", d("$type", 99)), "$type"},
		{"all not array", d("tags", d("$all", "x")), "$all needs an array"},
		{"elemMatch scalar", d("items", d("$elemMatch", 1)), "$elemMatch needs a document"},
		{"elemMatch unknown", d("items", d("$elemMatch", d("qty", d("$gtx", 1)))), "unknown operator $gtx"},
		{"not scalar", d("n", d("$not", 3)), "$not needs a regex or a document"},
		{"not empty", d("n", d("$not", bson.D{})), "$not"},
		{"not unknown", d("n", d("$not", d("$bad", 1))), "unknown operator $bad"},
		{"regex number", d("s", d("$regex", 5)), "$regex"},
		{"options alone", d("s", d("$options", "i")), "$options"},
		{"exists twice nested deep", deep(200), "nested more than"},
		{"bits", d("n", d("$bitsAllSet", "x")), "$bitsAllSet"},
		{"elemMatch top", d("$elemMatch", d("a", 1)), "unknown top-level operator $elemMatch"},
		{"expr at field", d("n", d("$expr", true)), "unknown operator $expr"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c := orderConfig()
			c.Frozen = tc.frozen
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, pattern.ErrInvalidConfig) || !strings.Contains(err.Error(), "Frozen") {
				t.Fatalf("Validate = %v, want ErrInvalidConfig naming Frozen", err)
			}
			// The server refuses it too, as the fan-out would have found.
			nor := bson.D{{Key: "$nor", Value: bson.A{tc.frozen}}}
			if err := db.Collection("orders").FindOne(context.Background(), nor).Err(); err == nil || errors.Is(err, mongo.ErrNoDocuments) {
				t.Errorf("the server accepts %v", tc.frozen)
			}
			if _, err := New[bson.D, bson.D, bson.D](db.Collection("customers"), db.Collection("orders"), c); err == nil {
				t.Fatal("New accepted a bad Frozen filter")
			}
		})
	}
	good := []bson.D{
		d("status", "delivered"),
		d("status", d("$in", bson.A{"delivered", "cancelled"})),
		bson.D{{Key: "status", Value: d("$ne", "open")}, {Key: "total", Value: bson.D{{Key: "$gte", Value: 1}, {Key: "$lt", Value: 9.5}}}},
		d("$or", bson.A{d("status", "delivered"), d("archived", true)}),
		d("$and", bson.A{d("a", d("$exists", true)), d("$nor", bson.A{d("b", 1)})}),
		d("items", d("$elemMatch", d("qty", d("$gt", 1)))),
		d("items", d("$elemMatch", bson.D{{Key: "$gt", Value: 1}, {Key: "$lt", Value: 5}})),
		d("items", d("$size", 2)),
		d("items", d("$size", 2.0)),
		d("n", d("$mod", bson.A{4, 0})),
		d("n", d("$type", bson.A{"int", "long", 1, "number"})),
		d("n", d("$not", d("$gt", 3))),
		d("s", d("$not", bson.Regex{Pattern: "^x"})),
		d("s", bson.D{{Key: "$regex", Value: "^De"}, {Key: "$options", Value: "i"}}),
		d("s", bson.Regex{Pattern: "^De", Options: "i"}),
		d("tags", d("$all", bson.A{"a", "b"})),
		d("$expr", d("$gt", bson.A{"$total", 100})),
		d("address", d("city", "Paris")), // an embedded document, not operators
		d("$comment", "frozen orders"),
		d("n", d("$bitsAnySet", bson.A{1, 5})),
		d("n", d("$eq", d("$notAnOperator", 1))), // $eq takes any value
	}
	for i, f := range good {
		c := orderConfig()
		c.Frozen = f
		if err := c.Validate(); err != nil {
			t.Errorf("good filter %d %v: %v", i, f, err)
		}
		// The server takes it too, negated as the fan-out uses it.
		nor := bson.D{{Key: "$nor", Value: bson.A{f}}}
		if err := db.Collection("orders").FindOne(context.Background(), nor).Err(); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			t.Errorf("good filter %d %v: server: %v", i, f, err)
		}
	}
}

// deep nests $and n levels down.
func deep(n int) bson.D {
	f := bson.D{{Key: "a", Value: 1}}
	for range n {
		f = bson.D{{Key: "$and", Value: bson.A{f}}}
	}
	return f
}

// TestEnsureIndexesFrozenExpr checks that what Validate leaves to the
// server, an $expr's expression, fails EnsureIndexes rather than the
// first fan-out.
func TestEnsureIndexesFrozenExpr(t *testing.T) {
	db := testenv.Database(t)
	c := orderConfig()
	c.Frozen = bson.D{{Key: "$expr", Value: bson.D{{Key: "$noSuchOperator", Value: 1}}}}
	r, err := New[bson.D, bson.D, bson.D](db.Collection("customers"), db.Collection("orders"), c)
	if err != nil {
		t.Fatal(err)
	}
	err = r.EnsureIndexes(context.Background())
	if !errors.Is(err, pattern.ErrInvalidConfig) || !strings.Contains(err.Error(), "Frozen") {
		t.Fatalf("EnsureIndexes = %v, want ErrInvalidConfig naming Frozen", err)
	}
}
