package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("collMod", &spec{run: runCollMod, apiV1: true, help: "change collection or index options"})
}

// runCollMod changes an index's hidden flag or TTL (the options mongosh's
// hideIndex/unhideIndex use). Collection options the engine does not have
// (time series options) answer NotImplemented; changeStreamPreAndPostImages
// is changestream_images.go's.
// validator, validationLevel and validationAction are validation.go's
// (collModValidation).
// https://www.mongodb.com/docs/manual/reference/command/collMod/
func runCollMod(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	if ts := r.Env.tsColl(r.DB + "." + name); ts != nil {
		return r.collModTimeseries(ctx, ts)
	}
	var ixSpec, images bson.Raw
	validation := map[string]*bson.E{}
	err = fields("collMod", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "index":
			ixSpec, err = wantDoc("collMod", k, v)
		case "validator", "validationLevel", "validationAction":
			validation[k], err = parseValidationOption("collMod", r.DB+"."+name, k, v)
		case "changeStreamPreAndPostImages":
			images, err = parsePreAndPostImages("collMod", v)
		case "expireAfterSeconds", "timeseries", "viewOn", "pipeline", "cappedSize", "cappedMax", "recordIdsReplicated", "dryRun":
			return mongoerr.Newf(mongoerr.NotImplemented, "collMod option '%s' is not supported yet", k)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	if images != nil {
		if err := r.collModImages(ctx, ns, images); err != nil {
			return nil, err
		}
	}
	if len(validation) > 0 {
		if err := r.collModValidation(ctx, ns, validation); err != nil {
			return nil, err
		}
	}
	if ixSpec == nil {
		// An empty collMod succeeds when the collection exists.
		if r.Env.Store.Collection(ns) == nil {
			return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
		}
		if images == nil && len(validation) == 0 {
			return bson.D{}, r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error { return w.LogCollMod(ns) })
		}
		return bson.D{}, nil
	}
	return r.collModIndexOn(ctx, ns, ixSpec)
}

// collModIndexOn applies collMod's index document to the index of ns it
// names (hidden, expireAfterSeconds) and returns the reply's fields.
func (r *Request) collModIndexOn(ctx context.Context, ns string, ixSpec bson.Raw) (bson.D, error) {
	var reply bson.D
	err := r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
		}
		ix, err := collModIndex(c, ixSpec)
		if err != nil {
			return err
		}
		sp := ix.Def.Spec()
		elems, _ := ixSpec.Elements()
		changed := false
		for _, e := range elems {
			v := e.Value()
			switch e.Key() {
			case "name", "keyPattern":
			case "hidden":
				b, ok := v.BooleanOK()
				if !ok {
					return mongoerr.FieldType("collMod", "index.hidden", typeName(v.Type), "bool")
				}
				if sp.IsID() && b {
					return mongoerr.New(mongoerr.BadValue, "can't hide _id index")
				}
				reply = append(reply, bson.E{Key: "hidden_old", Value: sp.Hidden}, bson.E{Key: "hidden_new", Value: b})
				changed = changed || sp.Hidden != b
				sp.Hidden = b
			case "expireAfterSeconds":
				n, ok := asInt(v)
				if !ok || n < 0 || n > 1<<31-1 {
					return mongoerr.Newf(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
				}
				if sp.ExpireAfterSeconds == nil {
					return mongoerr.New(mongoerr.InvalidOptions, "no expireAfterSeconds field to update")
				}
				reply = append(reply, bson.E{Key: "expireAfterSeconds_old", Value: *sp.ExpireAfterSeconds}, bson.E{Key: "expireAfterSeconds_new", Value: int32(n)})
				ttl := int32(n)
				changed = changed || *sp.ExpireAfterSeconds != ttl
				sp.ExpireAfterSeconds = &ttl
			case "prepareUnique", "unique":
				return mongoerr.Newf(mongoerr.NotImplemented, "collMod index option '%s' is not supported yet", e.Key())
			default:
				return mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field 'collMod.index.%s' is an unknown field.", e.Key())
			}
		}
		if len(reply) == 0 {
			return mongoerr.New(mongoerr.InvalidOptions, "no expireAfterSeconds or hidden field")
		}
		if !changed {
			return nil
		}
		return w.ReplaceIndexSpec(ns, ix.Name, sp)
	})
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// collModIndex finds the index collMod names by name or key pattern.
func collModIndex(c *storage.Collection, spec bson.Raw) (*storage.Index, error) {
	if v, err := spec.LookupErr("name"); err == nil {
		n, ok := v.StringValueOK()
		if !ok {
			return nil, mongoerr.FieldType("collMod", "index.name", typeName(v.Type), "string")
		}
		if ix := c.IndexByName(n); ix != nil {
			return ix, nil
		}
		return nil, mongoerr.Newf(mongoerr.IndexNotFound, "cannot find index %s for ns %s", n, c.NS)
	}
	v, err := spec.LookupErr("keyPattern")
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "must specify either index name or key pattern for collMod")
	}
	key, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.FieldType("collMod", "index.keyPattern", typeName(v.Type), "object")
	}
	var found []*storage.Index
	for _, ix := range c.Indexes {
		if sameKey(ix.Key(), key) {
			found = append(found, ix)
		}
	}
	switch len(found) {
	case 0:
		return nil, mongoerr.Newf(mongoerr.IndexNotFound, "cannot find index %s for ns %s", formatDoc(key), c.NS)
	case 1:
		return found[0], nil
	}
	return nil, mongoerr.Newf(mongoerr.AmbiguousIndexKeyPattern, "key pattern %s matches more than one index", formatDoc(key))
}
