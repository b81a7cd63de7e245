package timeseries

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// maxTranslateDepth bounds the nesting TranslateQuery follows.
const maxTranslateDepth = 100

// TranslateQuery rewrites the filter of an update on a time series into a
// filter on its buckets, as mongod 7.0's timeseries::translateQuery: every
// top-level field (and every field of a document directly inside an array
// of a logical operator) must be the metaField or a path below it and is
// renamed to meta. InvalidOptions for any other field, for $expr and for
// $where.
func (o *Options) TranslateQuery(filter bson.Raw) (bson.Raw, error) {
	out, err := o.translateQueryDoc(filter, true, 0)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// notMeta is the error of an update or delete filter on another field.
func (o *Options) notMeta() error {
	return mongoerr.Newf(mongoerr.InvalidOptions, "Cannot perform an update or delete on a time-series collection when querying on a field that is not the metaField '%s'", o.MetaField)
}

// translateQueryDoc rewrites one document; top says its fields are
// field names (not operator arguments).
func (o *Options) translateQueryDoc(d []byte, top bool, depth int) ([]byte, error) {
	if depth > maxTranslateDepth {
		return nil, mongoerr.New(mongoerr.Overflow, "filter is nested too deeply")
	}
	idx, out := bsoncore.AppendDocumentStart(nil)
	var err error
	bsonkit.ForEach(d, func(k string, v bson.RawValue) bool {
		switch {
		case k == "$expr":
			err = mongoerr.New(mongoerr.InvalidOptions, "Cannot use $expr when performing an update or delete on a time-series collection")
			return false
		case k == "$where":
			err = mongoerr.New(mongoerr.InvalidOptions, "Cannot use $where when performing an update or delete on a time-series collection")
			return false
		}
		name := k
		if top && (k == "" || k[0] != '$') {
			if !o.isMetaPath(k) {
				err = o.notMeta()
				return false
			}
			name = o.metaRename(k)
		}
		switch v.Type {
		case bson.TypeArray:
			aidx, arr := bsoncore.AppendArrayStart(nil)
			for i, e := range bsonkit.Values(v.Value) {
				if e.Type == bson.TypeEmbeddedDocument {
					var sub []byte
					if sub, err = o.translateQueryDoc(e.Value, true, depth+1); err != nil {
						return false
					}
					arr = bsoncore.AppendDocumentElement(arr, itoa(i), sub)
					continue
				}
				arr = appendValue(arr, itoa(i), e)
			}
			arr, _ = bsoncore.AppendArrayEnd(arr, aidx)
			out = bsoncore.AppendArrayElement(out, name, arr)
		case bson.TypeEmbeddedDocument:
			var sub []byte
			if sub, err = o.translateQueryDoc(v.Value, false, depth+1); err != nil {
				return false
			}
			out = bsoncore.AppendDocumentElement(out, name, sub)
		default:
			out = appendValue(out, name, v)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, nil
}

// TranslateUpdate rewrites an update document on a time series into one
// on its buckets (mongod's timeseries::translateUpdate): only operator
// updates whose every field (and $rename target) is the metaField or a
// path below it, renamed to meta. InvalidOptions for a pipeline, a
// replacement document, a collection without metaField or any other field.
func (o *Options) TranslateUpdate(u bson.RawValue) (bson.Raw, error) {
	if u.Type == bson.TypeArray {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection using a pipeline update")
	}
	d, _ := u.DocumentOK()
	replacement := true
	bsonkit.ForEach(d, func(k string, _ bson.RawValue) bool {
		if len(k) > 0 && k[0] == '$' {
			replacement = false
		}
		return true
	})
	if replacement && len(d) > 5 {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection using a replacement document")
	}
	if o.MetaField == "" {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection that does not have a metaField")
	}
	notMeta := mongoerr.Newf(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection which updates a field that is not the metaField '%s'", o.MetaField)
	idx, out := bsoncore.AppendDocumentStart(nil)
	var err error
	bsonkit.ForEach(d, func(op string, fields bson.RawValue) bool {
		if fields.Type != bson.TypeEmbeddedDocument {
			out = appendValue(out, op, fields)
			return true
		}
		fidx, f := bsoncore.AppendDocumentStart(nil)
		bsonkit.ForEach(fields.Value, func(k string, v bson.RawValue) bool {
			if !o.isMetaPath(k) {
				err = notMeta
				return false
			}
			if op == "$rename" {
				s, ok := v.StringValueOK()
				if !ok || !o.isMetaPath(s) {
					err = notMeta
					return false
				}
				f = bsoncore.AppendStringElement(f, o.metaRename(k), o.metaRename(s))
				return true
			}
			f = appendValue(f, o.metaRename(k), v)
			return true
		})
		if err != nil {
			return false
		}
		f, _ = bsoncore.AppendDocumentEnd(f, fidx)
		out = bsoncore.AppendDocumentElement(out, op, f)
		return true
	})
	if err != nil {
		return nil, err
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, nil
}
