package versioning

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// ContactV1 is the manual's first contact shape: phone numbers at the top.
type ContactV1 struct {
	ID   int    `bson:"_id"`
	Name string `bson:"name"`
	Home string `bson:"home,omitempty"`
	Work string `bson:"work,omitempty"`
}

// ContactV2 moves them under contactInfo.
type ContactV2 struct {
	ID          int         `bson:"_id"`
	Name        string      `bson:"name"`
	ContactInfo ContactInfo `bson:"contactInfo"`
}

// ContactInfo is a contact's phone numbers and handles.
type ContactInfo struct {
	Home      string `bson:"home,omitempty"`
	Work      string `bson:"work,omitempty"`
	Cell      string `bson:"cell,omitempty"`
	Instagram string `bson:"instagram,omitempty"`
}

// Contact is the newest shape, version 3: with tags.
type Contact struct {
	ID            int         `bson:"_id"`
	SchemaVersion int         `bson:"schemaVersion"`
	Name          string      `bson:"name"`
	ContactInfo   ContactInfo `bson:"contactInfo"`
	Tags          []string    `bson:"tags"`
}

// upTo2 moves home and work under contactInfo, in memory.
func upTo2(d bson.D) (bson.D, error) {
	for _, f := range []string{"home", "work"} {
		if v, ok := lookup(d, f); ok {
			d = set(unset(d, f), "contactInfo."+f, v)
		}
	}
	if _, ok := lookup(d, "contactInfo"); !ok {
		d = set(d, "contactInfo", bson.D{})
	}
	return d, nil
}

// upTo3 adds empty tags, in memory.
func upTo3(d bson.D) (bson.D, error) {
	return set(d, "tags", bson.A{}), nil
}

// pipeTo2 and pipeTo3 are the same upgrades as update pipelines.
var (
	pipeTo2 = []bson.D{
		{{Key: "$set", Value: bson.D{{Key: "contactInfo", Value: bson.D{{Key: "$mergeObjects", Value: bson.A{
			bson.D{{Key: "$ifNull", Value: bson.A{"$contactInfo", bson.D{}}}},
			bson.D{{Key: "home", Value: "$home"}, {Key: "work", Value: "$work"}},
		}}}}}}},
		{{Key: "$unset", Value: bson.A{"home", "work"}}},
	}
	pipeTo3 = []bson.D{{{Key: "$set", Value: bson.D{{Key: "tags", Value: bson.D{{Key: "$literal", Value: bson.A{}}}}}}}}
)

// counted wraps the steps so that each upgrade of a document increments
// upgrades.v<n>: the kill tests count upgrades per document.
func counted(pipelines bool) []Version {
	vs := []Version{
		{Number: 1, Schema: ContactV1{}},
		{Number: 2, Schema: ContactV2{}, Up: upTo2},
		{Number: 3, Schema: Contact{}, Up: upTo3},
	}
	for i := 1; i < len(vs); i++ {
		n := vs[i].Number
		up := vs[i].Up
		vs[i].Up = func(d bson.D) (bson.D, error) {
			d, err := up(d)
			if err != nil {
				return nil, err
			}
			c, _ := lookup(d, fmt.Sprintf("upgrades.v%d", n))
			k, _ := c.(int32)
			return set(d, fmt.Sprintf("upgrades.v%d", n), k+1), nil
		}
		if pipelines {
			p := append([]bson.D(nil), pipeTo2...)
			if n == 3 {
				p = append([]bson.D(nil), pipeTo3...)
			}
			f := fmt.Sprintf("upgrades.v%d", n)
			vs[i].Pipeline = append(p, bson.D{{Key: "$set", Value: bson.D{{Key: f, Value: bson.D{{Key: "$add", Value: bson.A{bson.D{{Key: "$ifNull", Value: bson.A{"$" + f, 0}}}, 1}}}}}}})
		}
	}
	return vs
}

// contacts returns a Store over a fresh contacts collection.
func contacts(t testing.TB, cfg Config) (*Store[Contact], *mongo.Collection) {
	t.Helper()
	coll := testenv.Database(t).Collection("contacts")
	if cfg.Versions == nil {
		cfg.Versions = []Version{
			{Number: 1, Schema: ContactV1{}},
			{Number: 2, Schema: ContactV2{}, Up: upTo2, Pipeline: pipeTo2},
			{Number: 3, Schema: Contact{}, Up: upTo3, Pipeline: pipeTo3},
		}
	}
	s, err := New[Contact](coll, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, coll
}

// seed inserts n contacts, a third each without a version field (v1), at
// version 1 and at version 2, with _ids 0…n-1.
func seed(t testing.TB, coll *mongo.Collection, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range n {
		switch i % 3 {
		case 0:
			docs[i] = ContactV1{ID: i, Name: fmt.Sprint("c", i), Work: fmt.Sprint("w", i)}
		case 1:
			docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 1}, {Key: "name", Value: fmt.Sprint("c", i)}, {Key: "home", Value: fmt.Sprint("h", i)}, {Key: "work", Value: fmt.Sprint("w", i)}}
		default:
			docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 2}, {Key: "name", Value: fmt.Sprint("c", i)},
				{Key: "contactInfo", Value: bson.D{{Key: "work", Value: fmt.Sprint("w", i)}, {Key: "cell", Value: fmt.Sprint("m", i)}}}}
		}
	}
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// stored reads document id as stored.
func stored(t testing.TB, coll *mongo.Collection, id any) bson.Raw {
	t.Helper()
	doc, err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
