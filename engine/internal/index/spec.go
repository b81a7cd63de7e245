package index

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Field is one field of a key pattern.
type Field struct {
	// Path is the dotted field path. For a wildcard field it is the prefix
	// before "$**" without the trailing dot ("" for "$**").
	Path string
	// Desc is true for a negative key pattern value.
	Desc bool
	// Wildcard marks a "$**" or "path.$**" field.
	Wildcard bool
}

// Spec is one index's definition as stored in the catalog and shown by
// listIndexes. ParseSpec returns it validated; Doc renders it back. A Spec
// is a value: it does not alias the document it was parsed from.
type Spec struct {
	V      int32    // index version: 2 unless the request asked for 1
	Key    bson.Raw // the key pattern as given, field order preserved
	Fields []Field  // Key parsed, one per key pattern field
	Name   string
	Unique bool
	Sparse bool
	Hidden bool
	// PartialFilterExpression is nil when the index is not partial.
	PartialFilterExpression bson.Raw
	// ExpireAfterSeconds is nil unless the index is a TTL index.
	ExpireAfterSeconds *int32
	// WildcardProjection is nil unless given (wildcard indexes only).
	WildcardProjection bson.Raw
	// Collation is the index's normalised collation spec, nil for the
	// simple collation. CollationGiven says whether the request named a
	// collation (createIndexes then does not apply the collection's
	// default).
	Collation      bson.Raw
	CollationGiven bool
	// Options holds the accepted options that have no effect here
	// (background, storageEngine, dropDups, ...), in request order, so
	// listIndexes can show them as mongod does. "ns" is dropped.
	Options bson.Raw
}

// IsID reports whether s is the _id index ({_id: 1}).
func (s Spec) IsID() bool {
	return len(s.Fields) == 1 && s.Fields[0].Path == "_id" && !s.Fields[0].Desc && !s.Fields[0].Wildcard && isOne(s.Key)
}

// IsWildcard reports whether s has a wildcard field.
func (s Spec) IsWildcard() bool {
	for _, f := range s.Fields {
		if f.Wildcard {
			return true
		}
	}
	return false
}

// Doc returns the spec document listIndexes shows:
// {v, key, name, unique?, sparse?, hidden?, partialFilterExpression?,
// expireAfterSeconds?, wildcardProjection?, ...Options}.
func (s Spec) Doc() bson.Raw {
	idx, d := bsoncore.AppendDocumentStart(nil)
	d = bsoncore.AppendInt32Element(d, "v", s.V)
	d = bsoncore.AppendDocumentElement(d, "key", s.Key)
	d = bsoncore.AppendStringElement(d, "name", s.Name)
	if s.Unique {
		d = bsoncore.AppendBooleanElement(d, "unique", true)
	}
	if s.Sparse {
		d = bsoncore.AppendBooleanElement(d, "sparse", true)
	}
	if s.Hidden {
		d = bsoncore.AppendBooleanElement(d, "hidden", true)
	}
	if s.PartialFilterExpression != nil {
		d = bsoncore.AppendDocumentElement(d, "partialFilterExpression", s.PartialFilterExpression)
	}
	if s.ExpireAfterSeconds != nil {
		d = bsoncore.AppendInt32Element(d, "expireAfterSeconds", *s.ExpireAfterSeconds)
	}
	if s.WildcardProjection != nil {
		d = bsoncore.AppendDocumentElement(d, "wildcardProjection", s.WildcardProjection)
	}
	if s.Collation != nil {
		d = bsoncore.AppendDocumentElement(d, "collation", s.Collation)
	}
	if elems, err := s.Options.Elements(); err == nil {
		for _, e := range elems {
			d = append(d, e...)
		}
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// allowedOptions are the index spec fields mongod 7.0 accepts
// (index_key_validate::allowedFieldNames).
var allowedOptions = map[string]bool{
	"bits": true, "max": true, "min": true, "2dsphereIndexVersion": true,
	"coarsestIndexedLevel": true, "finestIndexedLevel": true,
	"background": true, "collation": true, "default_language": true,
	"dropDups": true, "expireAfterSeconds": true, "hidden": true,
	"name": true, "v": true, "key": true, "language_override": true,
	"ns": true, "partialFilterExpression": true, "wildcardProjection": true,
	"columnstoreProjection": true, "sparse": true, "storageEngine": true,
	"textIndexVersion": true, "unique": true, "weights": true,
	"originalSpec": true, "prepareUnique": true, "columnstoreCompressor": true,
	"clustered": true, "_id": true, "bucketSize": true,
}

// idIndexOptions are the fields allowed in an _id index spec.
var idIndexOptions = map[string]bool{"collation": true, "name": true, "v": true, "key": true, "ns": true, "_id": true}

// ParseSpec validates one entry of createIndexes' "indexes" array as mongod
// 7.0 does and returns the index definition. Errors are *mongoerr.Error
// with mongod's code and message: InvalidIndexSpecificationOption (197) for
// an unknown option, TypeMismatch (14) for an option of the wrong type,
// CannotCreateIndex (67) for a bad key pattern or option combination,
// BadValue (2), FailedToParse (9), and NotImplemented (238) for index types
// and options Formwork does not implement (text, 2d, 2dsphere, hashed,
// columnstore, clustered, non-simple collation). ParseSpec does not retain
// raw.
//
// Following mongod's index_key_validate.cpp and IndexCatalogImpl::_isSpecOk.
func ParseSpec(raw bson.Raw) (Spec, error) {
	if err := raw.Validate(); err != nil {
		return Spec{}, mongoerr.Newf(mongoerr.InvalidBSON, "invalid index specification: %v", err)
	}
	specText := formatDoc(raw)
	inSpec := func(e *mongoerr.Error) error {
		return mongoerr.Newf(e.Code, "Error in specification %s :: caused by :: %s", specText, e.Msg)
	}
	elems, _ := raw.Elements()
	for _, e := range elems {
		if !allowedOptions[e.Key()] {
			return Spec{}, inSpec(mongoerr.Newf(mongoerr.InvalidIndexSpecificationOption,
				"The field '%s' is not valid for an index specification. Specification: %s", e.Key(), specText))
		}
	}
	s := Spec{V: 2}
	var (
		hasKey, hasName, hasWeights, prepareUnique, hasCollation bool
		pluginName                                               string
		options                                                  []bson.RawElement
	)
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		switch k {
		case "key":
			if v.Type != bson.TypeEmbeddedDocument {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'key' must be an object, but got %s", typeName(v.Type)))
			}
			key := bson.Raw(v.Value)
			fields, plugin, err := parseKeyPattern(key, raw)
			if err != nil {
				return Spec{}, inSpec(err)
			}
			s.Key = append(bson.Raw(nil), key...)
			s.Fields = fields
			pluginName = plugin
			hasKey = true
		case "name":
			if v.Type != bson.TypeString {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'name' must be a string, but got %s", typeName(v.Type)))
			}
			s.Name = v.StringValue()
			hasName = true
		case "hidden":
			if v.Type != bson.TypeBoolean {
				// mongod names the wrong field in this message.
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'name' must be a bool, but got %s", typeName(v.Type)))
			}
			s.Hidden = v.Boolean()
		case "originalSpec":
			// The user's definition of a time series index, kept on the
			// buckets' index (listIndexes of the time series shows it).
			if v.Type == bson.TypeEmbeddedDocument {
				options = append(options, e)
			}
		case "ns", "_id":
			// Dropped as mongod drops them (ns since 4.4; _id is
			// internal).
		case "v":
			n, ok := number(v)
			if !ok {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'v' must be a number, but got %s", typeName(v.Type)))
			}
			if n != math.Trunc(n) || n < math.MinInt32 || n > math.MaxInt32 {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.BadValue, "Index version must be representable as a 32-bit integer, but got %s", formatValue(v)))
			}
			if n != 1 && n != 2 {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.CannotCreateIndex, "Invalid index specification %s; cannot create an index with v=%d", specText, int64(n)))
			}
			s.V = int32(n)
		case "collation":
			if v.Type != bson.TypeEmbeddedDocument {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'collation' must be an object, but got %s", typeName(v.Type)))
			}
			if len(v.Value) <= 5 {
				return Spec{}, inSpec(mongoerr.New(mongoerr.BadValue, "The field 'collation' cannot be an empty object."))
			}
			cs, simple, err := collation.ParseSpec(bson.Raw(v.Value))
			if err != nil {
				return Spec{}, err
			}
			if !simple {
				s.Collation = cs.Document()
			}
			s.CollationGiven = true
			hasCollation = true
		case "partialFilterExpression":
			if v.Type != bson.TypeEmbeddedDocument {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'partialFilterExpression' must be an object, but got %s", typeName(v.Type)))
			}
			if _, err := parseFilter(bson.Raw(v.Value)); err != nil {
				return Spec{}, inSpec(mongoerr.As(err))
			}
			s.PartialFilterExpression = append(bson.Raw(nil), v.Value...)
		case "wildcardProjection":
			if _, err := parseWildcardProjectionOption(raw, v); err != nil {
				return Spec{}, inSpec(err)
			}
			s.WildcardProjection = append(bson.Raw(nil), v.Value...)
		case "columnstoreProjection", "columnstoreCompressor":
			return Spec{}, inSpec(mongoerr.Newf(mongoerr.InvalidIndexSpecificationOption, "The field '%s' is only allowed in 'columnstore' indexes", k))
		case "weights":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray && v.Type != bson.TypeString {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field 'weights' must be an object, but got %s", typeName(v.Type)))
			}
			hasWeights = true
		case "background", "unique", "sparse", "dropDups", "prepareUnique", "clustered":
			if _, isNum := number(v); !isNum && v.Type != bson.TypeBoolean {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field '%s has value %s: %s, which is not convertible to bool", k, k, formatValue(v)))
			}
			t := truthy(v)
			switch k {
			case "unique":
				s.Unique = t
			case "sparse":
				s.Sparse = t
			case "prepareUnique":
				prepareUnique = t
				options = append(options, e)
			case "clustered":
				return Spec{}, mongoerr.New(mongoerr.NotImplemented, "clustered indexes are not supported")
			default:
				options = append(options, e)
			}
		case "default_language", "language_override":
			if v.Type != bson.TypeString {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field '%s' must be a string, but got %s", k, typeName(v.Type)))
			}
			options = append(options, e)
		case "2dsphereIndexVersion", "textIndexVersion", "bits", "min", "max", "coarsestIndexedLevel", "finestIndexedLevel":
			if _, ok := number(v); !ok {
				return Spec{}, inSpec(mongoerr.Newf(mongoerr.TypeMismatch, "The field '%s' must be a number, but got %s", k, typeName(v.Type)))
			}
			options = append(options, e)
		case "expireAfterSeconds":
			// Validated below, after the key pattern is known.
		default:
			options = append(options, e)
		}
	}
	if !hasKey {
		return Spec{}, inSpec(mongoerr.New(mongoerr.FailedToParse, "The 'key' field is a required property of an index specification"))
	}
	if !hasName {
		return Spec{}, inSpec(mongoerr.New(mongoerr.FailedToParse, "The 'name' field is a required property of an index specification"))
	}
	if hasCollation && s.V < 2 {
		return Spec{}, inSpec(mongoerr.Newf(mongoerr.CannotCreateIndex, "Invalid index specification %s; cannot create an index with the 'collation' option and v=%d", specText, s.V))
	}
	if pluginName != "text" && hasWeights {
		return Spec{}, inSpec(mongoerr.Newf(mongoerr.CannotCreateIndex, "Invalid index specification %s; the field 'weights' can only be specified with text indexes", specText))
	}
	if s.Unique && prepareUnique {
		return Spec{}, inSpec(mongoerr.Newf(mongoerr.CannotCreateIndex, "Invalid index specification %s; cannot create an index with the 'unique' option and the 'prepareUnique' option", specText))
	}

	if s.IsID() {
		for _, e := range elems {
			if !idIndexOptions[e.Key()] {
				return Spec{}, mongoerr.Newf(mongoerr.InvalidIndexSpecificationOption,
					"The field '%s' is not valid for an _id index specification. Specification: %s", e.Key(), specText)
			}
		}
	} else {
		if s.Name == "_id_" {
			return Spec{}, mongoerr.Newf(mongoerr.BadValue, "The index name '_id_' is reserved for the _id index, which must have key pattern {_id: 1}, found key: %s", formatDoc(s.Key))
		}
		if s.Name == "*" {
			return Spec{}, mongoerr.New(mongoerr.BadValue, "The index name '*' is not valid.")
		}
	}

	if ttl := raw.Lookup("expireAfterSeconds"); ttl.Type != 0 {
		secs, err := parseTTL(ttl, specText)
		if err != nil {
			return Spec{}, err
		}
		if len(s.Fields) != 1 {
			return Spec{}, mongoerr.Newf(mongoerr.CannotCreateIndex, "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s", specText)
		}
		s.ExpireAfterSeconds = &secs
	}

	switch pluginName {
	case "", "wildcard":
	default:
		// Divergence: these index types are not implemented yet.
		return Spec{}, mongoerr.Newf(mongoerr.NotImplemented, "index type '%s' is not supported", pluginName)
	}
	if s.Name == "" {
		return Spec{}, mongoerr.New(mongoerr.CannotCreateIndex, "index name cannot be empty")
	}
	if strings.IndexByte(s.Name, 0) >= 0 {
		return Spec{}, mongoerr.New(mongoerr.CannotCreateIndex, "index name cannot contain NUL bytes")
	}
	if pluginName == "wildcard" {
		switch {
		case s.Sparse:
			return Spec{}, mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'wildcard' does not support the sparse option")
		case s.Unique:
			return Spec{}, mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'wildcard' does not support the unique option")
		case s.ExpireAfterSeconds != nil:
			return Spec{}, mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'wildcard' cannot be a TTL index")
		}
	}
	if s.PartialFilterExpression != nil {
		if s.Sparse {
			return Spec{}, mongoerr.New(mongoerr.CannotCreateIndex, "cannot mix \"partialFilterExpression\" and \"sparse\" options")
		}
		f, _ := parseFilter(s.PartialFilterExpression)
		if err := checkPartialSupported(f, 0); err != nil {
			return Spec{}, err
		}
	}
	if len(options) > 0 {
		idx, d := bsoncore.AppendDocumentStart(nil)
		for _, e := range options {
			d = append(d, e...)
		}
		s.Options, _ = bsoncore.AppendDocumentEnd(d, idx)
	}
	return s, nil
}

// parseTTL validates expireAfterSeconds as mongod's validateIndexSpecTTL.
func parseTTL(v bson.RawValue, specText string) (int32, error) {
	fail := func(reason string) error {
		return mongoerr.Newf(mongoerr.CannotCreateIndex, ". Index spec: %s :: caused by :: %s", specText, reason)
	}
	n, ok := number(v)
	switch {
	case !ok:
		return 0, fail("TTL index 'expireAfterSeconds' option must be numeric, but received a type of '" + typeName(v.Type) + "'")
	case n != n:
		return 0, fail("TTL index 'expireAfterSeconds' option must not be NaN")
	}
	// safeNumberInt vs safeNumberLong: the truncated value must fit an int32.
	t := math.Trunc(n)
	if t < math.MinInt32 || t > math.MaxInt32 {
		return 0, fail("TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer")
	}
	if t < 0 {
		return 0, fail("TTL index 'expireAfterSeconds' option cannot be less than 0")
	}
	return int32(t), nil
}

// parseKeyPattern validates a key pattern (validateKeyPattern plus the
// checks validateIndexSpec makes on "key") and returns its fields and
// plugin name ("" for a btree index).
func parseKeyPattern(key, spec bson.Raw) ([]Field, string, *mongoerr.Error) {
	fail := func(msg string) ([]Field, string, *mongoerr.Error) {
		return nil, "", mongoerr.New(mongoerr.CannotCreateIndex, msg)
	}
	elems := mustElems(key)
	seen := map[string]bool{}
	for _, e := range elems {
		if seen[e.Key()] {
			return nil, "", mongoerr.Newf(mongoerr.BadValue, "The field '%s' appears multiple times in the index key pattern %s", e.Key(), formatDoc(key))
		}
		seen[e.Key()] = true
	}
	if len(key) > 2048 {
		return fail("Index key pattern too large.")
	}
	if len(elems) == 0 {
		return fail("Index keys cannot be empty.")
	}
	plugin := pluginOf(elems)
	switch plugin {
	case "", "wildcard", "text", "2d", "2dsphere", "2dsphere_bucket", "hashed", "columnstore":
	case "geoHaystack":
		return fail("GeoHaystack indexes cannot be created in version 5.0 and above")
	default:
		return fail("Unknown index plugin '" + plugin + "'")
	}
	var fields []Field
	wildcards := 0
	for _, e := range elems {
		v := e.Value()
		name := e.Key()
		if n, ok := number(v); ok {
			if n != n {
				return fail("Values in the index key pattern cannot be NaN.")
			}
			if n == 0 {
				return fail("Values in the index key pattern cannot be 0.")
			}
		} else if v.Type != bson.TypeString {
			return fail("Values in v:2 index key pattern cannot be of type " + typeName(v.Type) + ". Only numbers > 0, numbers < 0, and strings are allowed.")
		}
		if v.Type == bson.TypeString && v.StringValue() != plugin {
			return fail("Can't use more than one index plugin for a single index.")
		}
		if v.Type == bson.TypeString && v.StringValue() == "wildcard" {
			return fail("The key pattern value for an 'wildcard' index must be a non-zero number, not a string.")
		}
		if name == "" {
			return fail("Index keys cannot be an empty field.")
		}
		wild := name == "$**" || strings.HasSuffix(name, ".$**")
		if name == "$**" && (v.Type != bson.TypeString || v.StringValue() == "text" || v.StringValue() == "columnstore") {
			// acceptable as a whole-document wildcard or text index
		} else {
			if name == "_fts" && (v.Type != bson.TypeString || v.StringValue() != "text") {
				return fail("Index key contains an illegal field name: '_fts'")
			}
			parts := strings.Split(name, ".")
			for i, p := range parts {
				if p == "" {
					return fail("Index keys cannot contain an empty field.")
				}
				if p[0] != '$' {
					continue
				}
				dbRef := i > 0 && (p == "$db" || p == "$id" || p == "$ref")
				wildEnd := i == len(parts)-1 && p == "$**" && plugin == "wildcard"
				if !dbRef && !wildEnd {
					return fail("Index key contains an illegal field name: field name starts with '$'.")
				}
			}
		}
		if v.Type == bson.TypeString && v.StringValue() == "" {
			return fail("Values in the index key pattern cannot be empty strings")
		}
		f := Field{Path: name, Desc: isNegative(v)}
		if wild && plugin == "wildcard" {
			f.Wildcard = true
			f.Path = strings.TrimSuffix(strings.TrimSuffix(name, "$**"), ".")
			wildcards++
			if name == "$**" && len(elems) > 1 && spec.Lookup("wildcardProjection").Type == 0 {
				return fail("Compound wildcard indexes on all fields must also specify 'wildcardProjection' option")
			}
		}
		fields = append(fields, f)
	}
	if wildcards > 1 {
		return fail("A compound wildcard index must have exactly one wildcard component")
	}
	return fields, plugin, nil
}

// pluginOf is IndexNames::findPluginName: "wildcard" for a $** field with a
// numeric value, else the first string value, else "" (btree).
func pluginOf(elems []bson.RawElement) string {
	for _, e := range elems {
		k := e.Key()
		if _, isNum := number(e.Value()); isNum && (k == "$**" || strings.HasSuffix(k, ".$**")) {
			return "wildcard"
		}
	}
	for _, e := range elems {
		if s, ok := e.Value().StringValueOK(); ok {
			return s
		}
	}
	return ""
}

func mustElems(doc []byte) []bson.RawElement {
	elems, _ := bson.Raw(doc).Elements()
	return elems
}

// number returns v as a float64 if it is a number.
func number(v bson.RawValue) (float64, bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		return v.AsFloat64(), true
	case bson.TypeDecimal128:
		f, err := strconvDecimal(v.Decimal128())
		return f, err == nil
	}
	return 0, false
}

func isNegative(v bson.RawValue) bool {
	n, ok := number(v)
	return ok && n < 0
}

// isOne reports whether key's single value is the number 1.
func isOne(key bson.Raw) bool {
	elems := mustElems(key)
	if len(elems) != 1 {
		return false
	}
	n, ok := number(elems[0].Value())
	return ok && n == 1
}

// truthy is BSONElement::trueValue for the option types ParseSpec accepts.
func truthy(v bson.RawValue) bool {
	if v.Type == bson.TypeBoolean {
		return v.Boolean()
	}
	n, _ := number(v)
	return n != 0
}

func strconvDecimal(d bson.Decimal128) (float64, error) {
	return strconv.ParseFloat(d.String(), 64)
}
