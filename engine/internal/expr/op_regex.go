package expr

import (
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/regex"
)

// $regexMatch, $regexFind and $regexFindAll. Patterns compile through
// compileRegex on the PCRE-compatible engine of package regex.
func init() {
	register("$regexMatch", parseRegexOp)
	register("$regexFind", parseRegexOp)
	register("$regexFindAll", parseRegexOp)
}

// compileRegex compiles a pattern with MongoDB's options (i, m, s, x, u);
// the caller has validated the options. A pattern PCRE refuses fails with
// 51111 "Invalid Regex in <op>: <reason>", as mongod's expression operators
// report it.
func compileRegex(name, pattern, options string) (*regex.Regexp, error) {
	re, err := regex.Compile(name, pattern, options)
	if err != nil {
		msg := err.Error()
		if me, ok := err.(*mongoerr.Error); ok {
			msg = me.Msg
		}
		msg = strings.TrimPrefix(msg, "Regular expression is invalid: ")
		return nil, mongoerr.Newf(mongoerr.Code(51111), "Invalid Regex in %s: %s", name, msg)
	}
	return re, nil
}

// regexCache memoizes compiled patterns by operator, options and pattern,
// so that a pattern read from documents compiles once per distinct value.
// It is bounded: past regexCacheMax entries it is cleared.
var (
	regexCacheMu sync.Mutex
	regexCache   = map[string]*regex.Regexp{}
)

// regexCacheMax bounds regexCache.
const regexCacheMax = 1024

// cachedRegex returns the compiled pattern from the cache or compiles it.
func cachedRegex(name, pattern, options string) (*regex.Regexp, error) {
	key := name + "\x00" + options + "\x00" + pattern
	regexCacheMu.Lock()
	re, ok := regexCache[key]
	regexCacheMu.Unlock()
	if ok {
		return re, nil
	}
	re, err := compileRegex(name, pattern, options)
	if err != nil {
		return nil, err
	}
	regexCacheMu.Lock()
	if len(regexCache) >= regexCacheMax {
		regexCache = map[string]*regex.Regexp{}
	}
	regexCache[key] = re
	regexCacheMu.Unlock()
	return re, nil
}

// regexExpr is one of the three regex operators.
type regexExpr struct {
	name                  string
	input, regex, options Expr
}

// parseRegexOp parses {input, regex, options} (51103, 31022-31024).
func parseRegexOp(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.Code(51103), "%s expects an object of named arguments but found: %s", name, bsonkit.TypeName(arg.Type))
	}
	args, err := namedArgs(p, arg.Document(), []string{"input", "regex", "options"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(31024), "%s found an unknown argument: %s", name, k)
	})
	if err != nil {
		return nil, err
	}
	if args["input"] == nil {
		return nil, mongoerr.Newf(mongoerr.Code(31022), "%s requires 'input' parameter", name)
	}
	if args["regex"] == nil {
		return nil, mongoerr.Newf(mongoerr.Code(31023), "%s requires 'regex' parameter", name)
	}
	e := &regexExpr{name: name, input: args["input"], regex: args["regex"], options: args["options"]}
	// mongod compiles a constant pattern when it parses the operator, so
	// its errors do not wait for a document.
	if isConstExpr(e.regex) {
		if e.options == nil || isConstExpr(e.options) {
			check := *e
			check.input = Const(Missing)
			if _, _, err := check.prepare(&Ctx{Vars: make([]bson.RawValue, 2)}); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// prepare evaluates the operands and compiles the pattern; re is nil
// when the input or the pattern is nullish.
func (e *regexExpr) prepare(c *Ctx) (string, *regex.Regexp, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return "", nil, err
	}
	rv, err := e.regex.Eval(c)
	if err != nil {
		return "", nil, err
	}
	ov := Null()
	if e.options != nil {
		if ov, err = e.options.Eval(c); err != nil {
			return "", nil, err
		}
	}
	if !IsNullish(rv) && rv.Type != bson.TypeString && rv.Type != bson.TypeRegex {
		return "", nil, mongoerr.Newf(mongoerr.Code(51105), "%s needs 'regex' to be of type string or regex", e.name)
	}
	if !IsNullish(ov) && ov.Type != bson.TypeString {
		return "", nil, mongoerr.Newf(mongoerr.Code(51106), "%s needs 'options' to be of type string", e.name)
	}
	var pattern, options string
	havePattern := false
	switch rv.Type {
	case bson.TypeRegex:
		var flags string
		pattern, flags = rv.Regex()
		havePattern = true
		if flags != "" && !IsNullish(ov) {
			return "", nil, mongoerr.Newf(mongoerr.Code(51107), "%s: found regex option(s) specified in both 'regex' and 'option' fields", e.name)
		}
		options = flags
	case bson.TypeString:
		pattern, havePattern = rv.StringValue(), true
	}
	if !IsNullish(ov) {
		options = ov.StringValue()
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return "", nil, mongoerr.Newf(mongoerr.Code(51109), "%s: regular expression cannot contain an embedded null byte", e.name)
	}
	if strings.IndexByte(options, 0) >= 0 {
		return "", nil, mongoerr.Newf(mongoerr.Code(51110), "%s: regular expression options cannot contain an embedded null byte", e.name)
	}
	for _, f := range options {
		if !strings.ContainsRune("imsux", f) {
			return "", nil, mongoerr.Newf(mongoerr.Code(51108), "%s invalid flag in regex options: %c", e.name, f)
		}
	}
	var re *regex.Regexp
	if havePattern {
		if re, err = cachedRegex(e.name, pattern, options); err != nil {
			return "", nil, err
		}
	}
	if !IsNullish(in) && in.Type != bson.TypeString {
		return "", nil, mongoerr.Newf(mongoerr.Code(51104), "%s needs 'input' to be of type string", e.name)
	}
	if IsNullish(in) {
		return "", nil, nil
	}
	return in.StringValue(), re, nil
}

// maxRegexOutput bounds the total size of $regexFindAll's matches, as
// mongod's 64 MB buffer limit does.
const maxRegexOutput = 64 * 1024 * 1024

// Eval answers a bool ($regexMatch), a match document or null ($regexFind)
// or an array of match documents ($regexFindAll). A match that runs past
// the engine's time limit fails with 51156, as a PCRE execution error does
// in mongod.
func (e *regexExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, re, err := e.prepare(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	switch e.name {
	case "$regexMatch":
		if re == nil {
			return Bool(false), nil
		}
		ok, err := re.MatchString(in)
		if err != nil {
			return bson.RawValue{}, regex.ExecError(e.name, err)
		}
		return Bool(ok), nil
	case "$regexFind":
		if re == nil {
			return Null(), nil
		}
		m, err := re.Find(in, 0)
		if err != nil {
			return bson.RawValue{}, regex.ExecError(e.name, err)
		}
		if m == nil {
			return Null(), nil
		}
		return regexMatchDoc(m), nil
	}
	b := NewArrayBuilder(0)
	if re == nil {
		return b.Value(), nil
	}
	// Every match document takes more than 32 bytes, so this many matches
	// already exceed the output limit.
	all, err := re.FindAll(in, maxRegexOutput/32+1)
	if err != nil {
		return bson.RawValue{}, regex.ExecError(e.name, err)
	}
	total := 0
	for i := range mongoMatches(all, in) {
		d := regexMatchDoc(&all[i])
		total += len(d.Value)
		if total > maxRegexOutput {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(51151), "%s: the size of buffer to store output exceeded the 64MB limit", e.name)
		}
		b.Append(d)
	}
	if b.Size() > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	return b.Value(), nil
}

// mongoMatches returns how many of the engine's successive matches
// $regexFindAll reports. Both search again where a non-empty match ended
// and one code point further after an empty one, but mongod never starts a
// search at the end of a non-empty input, so a final empty match found
// from there is dropped.
func mongoMatches(all []regex.Match, in string) int {
	n := len(all)
	if n < 2 || len(in) == 0 {
		return n
	}
	last, prev := all[n-1], all[n-2]
	if last.Start != len(in) || last.End != len(in) {
		return n
	}
	next := prev.End
	if prev.Start == prev.End && prev.End < len(in) {
		next += cpLen(in[prev.End])
	}
	if next >= len(in) {
		return n - 1
	}
	return n
}

// regexMatchDoc builds {match, idx, captures} for m; idx counts code
// points, unmatched groups are null.
func regexMatchDoc(m *regex.Match) bson.RawValue {
	caps := NewArrayBuilder(len(m.Captures))
	for _, g := range m.Captures {
		if !g.Matched {
			caps.Append(Null())
		} else {
			caps.Append(String(g.Text))
		}
	}
	d := NewDocBuilder()
	d.Append("match", String(m.Text))
	d.Append("idx", Int32(int32(m.CodePoint)))
	d.Append("captures", caps.Value())
	return Doc(d.Doc())
}
