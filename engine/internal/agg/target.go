package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// parseTarget parses the output namespace of $out or $merge: a
// collection name, or {db, coll}. stage names the stage in errors.
func parseTarget(pc *parseCtx, stage, field string, v bson.RawValue, extra func(k string, v bson.RawValue) (bool, error)) (string, error) {
	db, coll := pc.opts.DB, ""
	switch v.Type {
	case bson.TypeString:
		coll = v.StringValue()
	case bson.TypeEmbeddedDocument:
		haveColl := false
		for _, el := range mustElems(v.Document()) {
			ev := el.Value()
			switch el.Key() {
			case "db":
				if ev.Type != bson.TypeString {
					return "", mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.db' is the wrong type '%s', expected type 'string'", field, typeName(ev))
				}
				db = ev.StringValue()
			case "coll":
				if ev.Type != bson.TypeString {
					return "", mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.coll' is the wrong type '%s', expected type 'string'", field, typeName(ev))
				}
				coll, haveColl = ev.StringValue(), true
			default:
				if extra != nil {
					if ok, err := extra(el.Key(), ev); ok || err != nil {
						if err != nil {
							return "", err
						}
						continue
					}
				}
				return "", mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '%s.%s' is an unknown field.", field, el.Key())
			}
		}
		if !haveColl {
			return "", mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.coll' is missing but a required field", field)
		}
	default:
		return "", mongoerr.Newf(mongoerr.TypeMismatch, "%s requires a string or object argument, but found %s", stage, typeName(v))
	}
	ns := nsOf(db, coll)
	if coll == "" || db == "" || strings.ContainsAny(db, "/\\. \"$") || strings.ContainsRune(coll, '$') || strings.ContainsRune(coll, 0) || strings.HasPrefix(coll, ".") {
		return "", mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid %s target namespace: '%s'", stage, ns)
	}
	return ns, nil
}
