package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("validateDBMetadata", &spec{run: runValidateDBMetadata, help: "list metadata that a Stable API version does not allow"})
}

// maxMetadataErrors bounds the apiVersionErrors of one reply; past it the
// reply says hasMoreErrors, as mongod does past its size limit.
const maxMetadataErrors = 10000

// runValidateDBMetadata reports the collections whose metadata is not
// allowed in the given API version: with {version: "1", strict: true},
// each sparse (or text) index is an APIStrictError entry. db and
// collection narrow the check; without db every database is checked.
// Formwork has no validators or views, the other things mongod checks.
// https://www.mongodb.com/docs/v7.0/reference/command/validateDBMetadata/
func runValidateDBMetadata(ctx context.Context, r *Request) (bson.D, error) {
	var db, coll, version string
	var hasDB, hasColl, hasParams, strict bool
	err := fields("validateDBMetadata", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "db":
			db, err = wantString("validateDBMetadata", k, v)
			hasDB = true
		case "collection":
			coll, err = wantString("validateDBMetadata", k, v)
			hasColl = true
		case "apiParameters":
			hasParams = true
			version, strict, err = parseAPIParameters(v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !hasParams {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'validateDBMetadata.apiParameters' is missing but a required field")
	}
	dbs := r.Env.Store.Databases()
	if hasDB {
		dbs = []string{db}
	}
	errs := bson.A{}
	more := false
	check := func(c *storage.Collection) bool {
		if !strict || version != "1" {
			return true
		}
		for _, ix := range c.Indexes {
			if indexInAPIV1(ix) {
				continue
			}
			if len(errs) >= maxMetadataErrors {
				more = true
				return false
			}
			errs = append(errs, bson.D{
				{Key: "ns", Value: c.NS},
				{Key: "code", Value: int32(mongoerr.APIStrictError)},
				{Key: "codeName", Value: mongoerr.APIStrictError.Name()},
				{Key: "errmsg", Value: "The index with name " + ix.Name + " is not allowed in API version 1."},
			})
		}
		return true
	}
	for _, d := range dbs {
		if err := ctx.Err(); err != nil {
			return nil, ctxErr(err)
		}
		if hasColl {
			if c := r.Env.Store.Collection(d + "." + coll); c != nil && !check(c) {
				break
			}
			continue
		}
		stop := false
		for _, c := range r.Env.Store.Collections(d) {
			if !check(c) {
				stop = true
				break
			}
		}
		if stop {
			break
		}
	}
	out := bson.D{{Key: "apiVersionErrors", Value: errs}}
	if more {
		out = append(out, bson.E{Key: "hasMoreErrors", Value: true})
	}
	return out, nil
}

// parseAPIParameters reads {version, strict?, deprecationErrors?}.
func parseAPIParameters(v bson.RawValue) (string, bool, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return "", false, mongoerr.FieldType("validateDBMetadata", "apiParameters", typeName(v.Type), "object")
	}
	var version string
	var strict, hasVersion bool
	elems, _ := d.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "version":
			s, ok := e.Value().StringValueOK()
			if !ok {
				return "", false, mongoerr.FieldType("apiParameters", "version", typeName(e.Value().Type), "string")
			}
			version, hasVersion = s, true
		case "strict", "deprecationErrors":
			b, ok := e.Value().BooleanOK()
			if !ok {
				return "", false, mongoerr.FieldType("apiParameters", e.Key(), typeName(e.Value().Type), "bool")
			}
			if e.Key() == "strict" {
				strict = b
			}
		default:
			return "", false, mongoerr.UnknownField("apiParameters", e.Key())
		}
	}
	if !hasVersion {
		return "", false, mongoerr.New(mongoerr.Code(40414), "BSON field 'apiParameters.version' is missing but a required field")
	}
	return version, strict, nil
}

// indexInAPIV1 is mongod's isIndexAllowedInAPIVersion1: text,
// geoHaystack and sparse indexes are not in API version 1.
func indexInAPIV1(ix *storage.Index) bool {
	if ix.Def != nil && ix.Def.Spec().Sparse {
		return false
	}
	vals, _ := ix.Key().Values()
	for _, v := range vals {
		if s, ok := v.StringValueOK(); ok && (s == "text" || s == "geoHaystack") {
			return false
		}
	}
	return true
}
