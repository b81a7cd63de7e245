package polymorphic

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/internal/jsonschema"
)

// Schema returns the collection's $jsonSchema: the discriminator required
// and one of the registered names, and a oneOf with one branch per
// variant, generated from the variant's struct (see the package doc for
// the type mapping). Branches are disjoint by the discriminator, so
// exactly one matches a valid document.
func (c *Collection) Schema() (bson.D, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.variants) == 0 {
		return nil, fmt.Errorf("polymorphic: schema: no variant registered: %w", ErrInvalidConfig)
	}
	names := bson.A{}
	branches := bson.A{}
	for _, v := range c.variants {
		names = append(names, v.name)
		obj, err := jsonschema.Object(v.typ, c.cfg.Field)
		if err != nil {
			return nil, err
		}
		branch := bson.D{}
		var props bson.D
		required := bson.A{c.cfg.Field}
		for _, e := range obj {
			switch e.Key {
			case "properties":
				props = e.Value.(bson.D)
			case "required":
				required = append(required, e.Value.(bson.A)...)
			}
		}
		props = append(bson.D{{Key: c.cfg.Field, Value: bson.D{{Key: "enum", Value: bson.A{v.name}}}}}, props...)
		branch = append(branch, bson.E{Key: "required", Value: required}, bson.E{Key: "properties", Value: props})
		branches = append(branches, branch)
	}
	return bson.D{
		{Key: "bsonType", Value: "object"},
		{Key: "required", Value: bson.A{c.cfg.Field}},
		{Key: "properties", Value: bson.D{{Key: c.cfg.Field, Value: bson.D{{Key: "bsonType", Value: "string"}, {Key: "enum", Value: names}}}}},
		{Key: "oneOf", Value: branches},
	}, nil
}

// Validator returns {$jsonSchema: Schema()}.
func (c *Collection) Validator() (bson.D, error) {
	s, err := c.Schema()
	if err != nil {
		return nil, err
	}
	return bson.D{{Key: "$jsonSchema", Value: s}}, nil
}

// EnsureValidator installs the validator with Config's validation level
// and action: create when the collection does not exist, collMod when it
// does (existing documents are not checked; Verify reports the ones that
// fit no variant).
func (c *Collection) EnsureValidator(ctx context.Context) error {
	val, err := c.Validator()
	if err != nil {
		return err
	}
	err = c.coll.Database().CreateCollection(ctx, c.coll.Name(), options.CreateCollection().
		SetValidator(val).SetValidationLevel(c.cfg.ValidationLevel).SetValidationAction(c.cfg.ValidationAction))
	var ce mongo.CommandError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ce) || ce.Code != 48 { // NamespaceExists
		return err
	}
	return c.coll.Database().RunCommand(ctx, bson.D{
		{Key: "collMod", Value: c.coll.Name()},
		{Key: "validator", Value: val},
		{Key: "validationLevel", Value: c.cfg.ValidationLevel},
		{Key: "validationAction", Value: c.cfg.ValidationAction},
	}).Err()
}
