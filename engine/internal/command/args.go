package command

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// fields walks the fields of a command after its first, calling fn for
// each one that is not a generic argument. fn returns an error to reject a
// field; returning errUnknown makes the walk answer 40415.
func fields(cmd string, body bson.Raw, fn func(key string, v bson.RawValue) error) error {
	elems, err := body.Elements()
	if err != nil {
		return mongoerr.Newf(mongoerr.InvalidBSON, "invalid command document: %v", err)
	}
	for _, e := range elems[1:] {
		k := e.Key()
		if isGeneric(k) {
			continue
		}
		if err := fn(k, e.Value()); err != nil {
			if err == errUnknown {
				return mongoerr.UnknownField(cmd, k)
			}
			return err
		}
	}
	return nil
}

// errUnknown is returned by a fields callback for a field it does not know.
var errUnknown = &mongoerr.Error{Code: mongoerr.UnknownBSONField}

// collectionName returns the collection named by the command's first field.
func collectionName(r *Request) (string, error) {
	v := r.Body.Index(0).Value()
	s, ok := v.StringValueOK()
	if !ok {
		return "", mongoerr.Newf(mongoerr.InvalidNamespace, "collection name has invalid type %s", typeName(v.Type))
	}
	if err := validCollName(r.DB, s); err != nil {
		return "", err
	}
	return s, nil
}

// validDBName checks a database name as mongod does.
func validDBName(db string) error {
	if db == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "database name cannot be empty")
	}
	if len(db) >= 64 {
		return mongoerr.Newf(mongoerr.InvalidNamespace, "db name must be at most 63 characters, found: %d", len(db))
	}
	if strings.ContainsAny(db, "/\\. \"$\x00") {
		return mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid database name: '%s'", db)
	}
	return nil
}

// validCollName checks a collection name as mongod does for user writes.
func validCollName(db, coll string) error {
	switch {
	case coll == "":
		return mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.'", db)
	case strings.ContainsRune(coll, 0):
		return mongoerr.Newf(mongoerr.InvalidNamespace, "namespaces cannot have embedded null characters")
	case strings.HasPrefix(coll, ".") || strings.HasSuffix(coll, "."):
		return mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.%s'", db, coll)
	case strings.Contains(coll, "$"):
		return mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid collection name: %s", coll)
	case len(db)+1+len(coll) > 255:
		return mongoerr.Newf(mongoerr.InvalidNamespace, "Fully qualified namespace is too long. Namespace: %s.%s Max: 255", db, coll)
	}
	return nil
}

func wantString(cmd, field string, v bson.RawValue) (string, error) {
	s, ok := v.StringValueOK()
	if !ok {
		return "", mongoerr.FieldType(cmd, field, typeName(v.Type), "string")
	}
	return s, nil
}

func wantDoc(cmd, field string, v bson.RawValue) (bson.Raw, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.FieldType(cmd, field, typeName(v.Type), "object")
	}
	return d, nil
}

func wantBool(cmd, field string, v bson.RawValue) (bool, error) {
	b, ok := asBool(v)
	if !ok {
		return false, mongoerr.FieldType(cmd, field, typeName(v.Type), "bool")
	}
	return b, nil
}

// wantNonNegative parses an integer field that must be >= 0, with the IDL
// validator's error (51024) otherwise.
func wantNonNegative(cmd, field string, v bson.RawValue) (int64, error) {
	if !isNumber(v) {
		return 0, mongoerr.FieldType(cmd, field, typeName(v.Type), "long")
	}
	n, ok := asInt(v)
	if !ok {
		f, _ := asFloat(v)
		n = int64(f)
	}
	if n < 0 {
		return 0, mongoerr.Newf(mongoerr.Code(51024), "BSON field '%s' value must be >= 0, actual value '%d'", field, n)
	}
	return n, nil
}

// docArray returns the documents of an array field.
func docArray(cmd, field string, v bson.RawValue) ([]bson.Raw, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.FieldType(cmd, field, typeName(v.Type), "array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "%v", err)
	}
	out := make([]bson.Raw, 0, len(vals))
	for i, e := range vals {
		d, ok := e.DocumentOK()
		if !ok {
			return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.%s.%d' is the wrong type '%s', expected type 'object'", cmd, field, i, typeName(e.Type))
		}
		out = append(out, d)
	}
	return out, nil
}
