package match

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/regex"
)

// regexTest is a compiled regular expression with the pattern and options
// as the user wrote them (a stored regex matches only an identical one).
type regexTest struct {
	pattern, options string
	re               *regex.Regexp
}

func compileRegexValue(v bson.RawValue) (*regexTest, error) {
	p, o := v.Regex()
	return compileRegex(p, o)
}

// compileRegex validates and compiles a PCRE pattern with MongoDB options
// (i, m, s, x, u). It returns BadValue for a pattern that is too long or
// holds a NUL, 51108 for an unknown option and 51091 for an invalid
// pattern, as mongod's RegexMatchExpression does.
func compileRegex(pattern, options string) (*regexTest, error) {
	re, err := regex.Compile("", pattern, options)
	if err != nil {
		return nil, err
	}
	return &regexTest{pattern: pattern, options: options, re: re}, nil
}

// test is mongod's RegexMatchExpression::matchesSingleElement: strings and
// symbols are searched, a stored regex matches when pattern and options
// are identical, anything else never matches.
//
// A match that runs past the regex time limit does not match, as a PCRE
// match that exceeds its match limit does not in mongod.
func (r *regexTest) test(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString:
		ok, _ := r.re.MatchString(v.StringValue())
		return ok
	case bson.TypeSymbol:
		ok, _ := r.re.MatchString(v.Symbol())
		return ok
	case bson.TypeRegex:
		p, o := v.Regex()
		return p == r.pattern && o == r.options
	}
	return false
}
