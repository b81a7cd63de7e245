package collation

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Version is the collator version mongod reports (its bundled ICU's).
const Version = "57.1"

// Spec is a parsed, normalised collation: every field set, defaults
// filled in from the locale, as mongod's CollationSpec holds it.
type Spec struct {
	Locale          string
	CaseLevel       bool
	CaseFirst       string // "upper", "lower" or "off"
	Strength        int    // 1 through 5
	NumericOrdering bool
	Alternate       string // "non-ignorable" or "shifted"
	MaxVariable     string // "punct" or "space"
	Normalization   bool
	Backwards       bool
	Version         string
}

// Document returns the spec as mongod echoes it (listIndexes,
// listCollections, explain): every field, in CollationSpec::toBSON's order.
func (s Spec) Document() bson.Raw {
	d := bson.D{
		{Key: "locale", Value: s.Locale},
		{Key: "caseLevel", Value: s.CaseLevel},
		{Key: "caseFirst", Value: s.CaseFirst},
		{Key: "strength", Value: int32(s.Strength)},
		{Key: "numericOrdering", Value: s.NumericOrdering},
		{Key: "alternate", Value: s.Alternate},
		{Key: "maxVariable", Value: s.MaxVariable},
		{Key: "normalization", Value: s.Normalization},
		{Key: "backwards", Value: s.Backwards},
		{Key: "version", Value: s.Version},
	}
	raw, _ := bson.Marshal(d)
	return raw
}

// Parse parses a collation document as mongod's CollatorFactoryICU does.
// It returns a nil *Collator for {locale: "simple"} (binary comparison).
// Errors carry mongod's codes and messages: NoSuchKey (4) for a missing
// locale, TypeMismatch (14) for a field of the wrong type, BadValue (2) for
// an unknown or malformed locale and invalid option combinations,
// FailedToParse (9) for bad option values and unknown fields, and
// IncompatibleCollationVersion (174) for a version other than Version.
// https://www.mongodb.com/docs/v7.0/reference/collation/#collation-document
func Parse(spec bson.Raw) (*Collator, error) {
	s, simple, err := ParseSpec(spec)
	if err != nil || simple {
		return nil, err
	}
	return New(s), nil
}

// ParseSpec is Parse without building the collator; simple reports the
// simple collation (s is then the zero Spec).
func ParseSpec(spec bson.Raw) (s Spec, simple bool, err error) {
	text := formatDoc(spec)
	elems, err := spec.Elements()
	if err != nil {
		return Spec{}, false, mongoerr.Newf(mongoerr.InvalidBSON, "invalid collation document: %v", err)
	}
	loc, ok, err := stringField(spec, "locale")
	if err != nil {
		return Spec{}, false, err
	}
	if !ok {
		return Spec{}, false, mongoerr.New(mongoerr.NoSuchKey, `Missing expected field "locale"`)
	}
	if strings.IndexByte(loc, 0) >= 0 {
		return Spec{}, false, mongoerr.Newf(mongoerr.BadValue, "Field 'locale' cannot contain null byte. Collation spec: %s", text)
	}
	if loc == "simple" {
		if len(elems) > 1 {
			return Spec{}, false, mongoerr.Newf(mongoerr.FailedToParse, "If locale=simple, no other fields should be present in: %s", text)
		}
		return Spec{}, true, nil
	}
	if loc == "" {
		return Spec{}, false, mongoerr.Newf(mongoerr.BadValue, "Field 'locale' cannot be the empty string in: %s", text)
	}
	def, known := locales[loc]
	if !known {
		msg := "Field 'locale' is invalid in: " + text
		if sug := suggestLocale(loc); sug != "" {
			msg += ". Did you mean '" + sug + "'?"
		}
		return Spec{}, false, mongoerr.New(mongoerr.BadValue, msg)
	}
	s = Spec{Locale: loc, CaseFirst: "off", Strength: 3, Alternate: "non-ignorable", MaxVariable: "punct",
		Normalization: def.normalization, Backwards: def.backwards, Version: Version}
	if def.caseFirst != "" {
		s.CaseFirst = def.caseFirst
	}
	if def.alternate != "" {
		s.Alternate = def.alternate
	}
	parsed := 1
	p := &fieldParser{spec: spec, parsed: &parsed}
	p.boolean("caseLevel", &s.CaseLevel)
	p.enum("caseFirst", &s.CaseFirst, "upper", "lower", "off")
	p.strength(&s.Strength)
	p.boolean("numericOrdering", &s.NumericOrdering)
	p.enum("alternate", &s.Alternate, "non-ignorable", "shifted")
	p.enum("maxVariable", &s.MaxVariable, "punct", "space")
	p.boolean("normalization", &s.Normalization)
	p.boolean("backwards", &s.Backwards)
	if p.err != nil {
		return Spec{}, false, p.err
	}
	v, ok, err := stringField(spec, "version")
	if err != nil {
		return Spec{}, false, err
	}
	if ok {
		if v != Version {
			return Spec{}, false, mongoerr.Newf(mongoerr.IncompatibleCollationVersion,
				"Requested collation version %s but the only available collator version was %s. Requested collation spec: %s", v, Version, text)
		}
		parsed++
	}
	if parsed < len(elems) {
		return Spec{}, false, mongoerr.Newf(mongoerr.FailedToParse, "Collation spec contains unknown field. Collation spec: %s", text)
	}
	if s.Backwards && s.Strength == 1 {
		return Spec{}, false, mongoerr.Newf(mongoerr.BadValue, "'backwards' is invalid with 'strength' of 1 in: %s", formatDoc(s.Document()))
	}
	if s.CaseFirst != "off" && !s.CaseLevel && s.Strength <= 2 {
		return Spec{}, false, mongoerr.Newf(mongoerr.BadValue, "'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: %s", formatDoc(s.Document()))
	}
	return s, false, nil
}

// fieldParser extracts the optional fields of a spec in mongod's order,
// keeping the first error.
type fieldParser struct {
	spec   bson.Raw
	parsed *int
	err    error
}

func (p *fieldParser) boolean(name string, out *bool) {
	if p.err != nil {
		return
	}
	v, err := p.spec.LookupErr(name)
	if err != nil {
		return
	}
	if v.Type != bson.TypeBoolean {
		p.err = wrongType(name, "bool", v.Type)
		return
	}
	*out = v.Boolean()
	*p.parsed++
}

func (p *fieldParser) enum(name string, out *string, allowed ...string) {
	if p.err != nil {
		return
	}
	s, ok, err := stringField(p.spec, name)
	if err != nil || !ok {
		p.err = err
		return
	}
	*p.parsed++
	for _, a := range allowed {
		if s == a {
			*out = s
			return
		}
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = "'" + a + "'"
	}
	list := strings.Join(quoted, " or ")
	if len(quoted) == 3 {
		list = quoted[0] + ", " + quoted[1] + ", or " + quoted[2]
	}
	p.err = mongoerr.Newf(mongoerr.FailedToParse, "Field '%s' must be %s. Got: %s", name, list, s)
}

func (p *fieldParser) strength(out *int) {
	if p.err != nil {
		return
	}
	v, err := p.spec.LookupErr("strength")
	if err != nil {
		return
	}
	var n int64
	switch v.Type {
	case bson.TypeInt32:
		n = int64(v.Int32())
	case bson.TypeInt64:
		n = v.Int64()
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			p.err = mongoerr.Newf(mongoerr.BadValue, `Expected field "strength" to have a value exactly representable as a 64-bit integer, but found strength: %s`, formatValue(v))
			return
		}
		n = int64(f)
	case bson.TypeDecimal128:
		f, perr := strconv.ParseFloat(v.Decimal128().String(), 64)
		if perr != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			p.err = mongoerr.Newf(mongoerr.BadValue, `Expected field "strength" to have a value exactly representable as a 64-bit integer, but found strength: %s`, formatValue(v))
			return
		}
		n = int64(f)
	default:
		p.err = mongoerr.Newf(mongoerr.TypeMismatch, `Expected field "strength" to have numeric type, but found %s`, typeName(v.Type))
		return
	}
	*p.parsed++
	if n < 1 || n > 5 {
		p.err = mongoerr.Newf(mongoerr.FailedToParse, "Field 'strength' must be an integer 1 through 5. Got: %d", n)
		return
	}
	*out = int(n)
}

// stringField is bsonExtractStringField: absent, a string, or TypeMismatch.
func stringField(spec bson.Raw, name string) (string, bool, error) {
	v, err := spec.LookupErr(name)
	if err != nil {
		return "", false, nil
	}
	if v.Type != bson.TypeString {
		return "", false, wrongType(name, "string", v.Type)
	}
	return v.StringValue(), true, nil
}

func wrongType(name, want string, got bson.Type) error {
	return mongoerr.Newf(mongoerr.TypeMismatch, `"%s" had the wrong type. Expected %s, found %s`, name, want, typeName(got))
}
