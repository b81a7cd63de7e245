package advisor

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestCheckUnboundedArrayFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("posts"), 40, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "comments", Value: ints(300 + i%2)}}
	})
	rep := advise(t, db, Thresholds{}, "unbounded-array", "outlier-skew")
	f := one(t, rep, "unbounded-array")
	if f.Namespace != db.Name()+".posts" || f.Subject != "comments" || f.Severity != Warning {
		t.Errorf("finding %+v", f)
	}
	wantFigure(t, f, "documents with the array", 40)
	wantFigure(t, f, "median length", 300)
	wantFigure(t, f, "p95 length", 301)
	wantFigure(t, f, "max length", 301)
	wantFix(t, f, "subset.Config{")
	if f.Fix.Lab != "formwork lab subset" {
		t.Errorf("lab link %q", f.Fix.Lab)
	}
	none(t, rep, "outlier-skew")
}

func TestCheckUnboundedArrayHealthy(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("posts"), 40, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "recent", Value: ints(20)}}
	})
	// A fixed-size vector is long but never grows.
	insert(t, db.Collection("chunks"), 40, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "embedding", Value: ints(768)}}
	})
	rep := advise(t, db, Thresholds{}, "unbounded-array", "outlier-skew")
	none(t, rep, "unbounded-array")
	none(t, rep, "outlier-skew")
}

func TestCheckOutlierSkewFinds(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("books"), 100, func(i int) bson.D {
		n := 5
		if i == 7 {
			n = 2000
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "buyers", Value: ints(n)}}
	})
	rep := advise(t, db, Thresholds{}, "unbounded-array", "outlier-skew")
	f := one(t, rep, "outlier-skew")
	if f.Subject != "buyers" {
		t.Errorf("subject %q", f.Subject)
	}
	wantFigure(t, f, "documents with the array", 100)
	wantFigure(t, f, "p95 length", 5)
	wantFigure(t, f, "max length", 2000)
	wantFigure(t, f, "max over p95", 400)
	wantFix(t, f, "Threshold: 10")
	none(t, rep, "unbounded-array")
}

func TestCheckOutlierSkewHealthy(t *testing.T) {
	db := newDB(t)
	// Long arrays everywhere are not outliers (unbounded-array's case),
	// and a longest array under ArrayLen is no outlier either.
	insert(t, db.Collection("books"), 100, func(i int) bson.D {
		n := 5
		if i == 7 {
			n = 150
		}
		return bson.D{{Key: "_id", Value: i}, {Key: "buyers", Value: ints(n)}}
	})
	rep := advise(t, db, Thresholds{}, "outlier-skew")
	none(t, rep, "outlier-skew")
}
