package polymorphic

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxDetails bounds the lines a Result carries.
const maxDetails = 200

// Verify reads every document and reports those that fit no variant: no
// string discriminator, an unknown one, a document its variant's type
// cannot decode, or one the generated schema rejects (asked of the server
// with {$nor: [{$jsonSchema: …}]}, so documents written before the
// validator, with bypassDocumentValidation or under ActionWarn are
// found). There is nothing derived to repair: fix or delete the
// documents it names.
func (c *Collection) Verify(ctx context.Context) (pattern.Result, error) {
	r := pattern.Result{Name: "polymorphic " + c.coll.Name()}
	bad := map[string]bool{}
	add := func(id bson.RawValue, why string) {
		k := id.String()
		if bad[k] {
			return
		}
		bad[k] = true
		r.Problems++
		if len(r.Details) < maxDetails {
			r.Details = append(r.Details, fmt.Sprintf("%s: %s", k, why))
		}
	}
	cur, err := c.coll.Find(ctx, bson.D{})
	if err != nil {
		return r, err
	}
	for cur.Next(ctx) {
		r.Checked++
		doc := cur.Current
		name, ok := c.Discriminator(doc)
		if !ok {
			add(doc.Lookup("_id"), fmt.Sprintf("no string %s", c.cfg.Field))
			continue
		}
		if _, ok := c.lookup(name); !ok {
			add(doc.Lookup("_id"), fmt.Sprintf("%s %q is no registered variant", c.cfg.Field, name))
			continue
		}
		if _, err := c.Decode(doc); err != nil {
			add(doc.Lookup("_id"), err.Error())
		}
	}
	if err := cur.Err(); err != nil {
		cur.Close(ctx)
		return r, err
	}
	cur.Close(ctx)
	s, err := c.Schema()
	if err != nil {
		return r, err
	}
	cur, err = c.coll.Find(ctx, bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: "$jsonSchema", Value: s}}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: c.cfg.Field, Value: 1}}))
	if err != nil {
		return r, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		name, _ := c.Discriminator(cur.Current)
		add(cur.Current.Lookup("_id"), fmt.Sprintf("fails the %q branch of the validator", name))
	}
	return r, cur.Err()
}
