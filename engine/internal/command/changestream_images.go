package command

import (
	"context"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// parsePreAndPostImages checks a changeStreamPreAndPostImages option,
// {enabled: <bool>}, of create or collMod and returns it.
// https://www.mongodb.com/docs/v7.0/reference/command/collMod/#change-streams-with-document-pre--and-post-images
func parsePreAndPostImages(cmd string, v bson.RawValue) (bson.Raw, error) {
	d, err := wantDoc(cmd, "changeStreamPreAndPostImages", v)
	if err != nil {
		return nil, err
	}
	elems, err := d.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	have := false
	for _, e := range elems {
		if e.Key() != "enabled" {
			return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '%s.changeStreamPreAndPostImages.%s' is an unknown field.", cmd, e.Key())
		}
		if e.Value().Type != bson.TypeBoolean {
			return nil, mongoerr.FieldType(cmd, "changeStreamPreAndPostImages.enabled", typeName(e.Value().Type), "bool")
		}
		have = true
	}
	if !have {
		return nil, mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.changeStreamPreAndPostImages.enabled' is missing but a required field", cmd)
	}
	return d, nil
}

// collModImages sets the changeStreamPreAndPostImages option of ns.
func (r *Request) collModImages(ctx context.Context, ns string, images bson.Raw) error {
	return r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
		}
		var opts []byte
		replaced := false
		elems, _ := c.Options.Elements()
		for _, e := range elems {
			if e.Key() == "changeStreamPreAndPostImages" {
				opts = bsoncore.AppendDocumentElement(opts, e.Key(), images)
				replaced = true
				continue
			}
			opts = append(opts, e...)
		}
		if !replaced {
			opts = bsoncore.AppendDocumentElement(opts, "changeStreamPreAndPostImages", images)
		}
		return w.SetOptions(ns, bsoncore.BuildDocument(nil, opts))
	})
}
