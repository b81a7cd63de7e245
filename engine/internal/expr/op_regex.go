package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// $regexMatch, $regexFind and $regexFindAll. Patterns compile through
// compileRegex, the one place that knows the regex engine.
func init() {
	register("$regexMatch", parseRegexOp)
	register("$regexFind", parseRegexOp)
	register("$regexFindAll", parseRegexOp)
}

// compileRegex compiles a pattern with MongoDB's options: i (case
// insensitive), m (^ and $ at line ends), s (dot matches newline), x
// (whitespace and #-comments in the pattern are ignored) and u (UTF-8,
// always on). The caller has validated the options.
//
// Divergence: patterns are compiled with Go's RE2-style regexp, not PCRE.
// Back-references, lookaround, possessive quantifiers and atomic groups
// fail with 51111, and $ without m matches only at the very end (PCRE
// also matches before a final newline). TODO(#regex): switch to the
// PCRE-compatible package once it lands.
func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	flags := ""
	for _, f := range "ims" {
		if strings.ContainsRune(options, f) {
			flags += string(f)
		}
	}
	if strings.ContainsRune(options, 'x') {
		pattern = stripExtended(pattern)
	}
	if flags != "" {
		pattern = "(?" + flags + ")" + pattern
	}
	return regexp.Compile(pattern)
}

// stripExtended removes what PCRE's extended mode ignores: unescaped
// whitespace and comments from # to the end of the line, outside
// character classes.
func stripExtended(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// regexCache memoizes compiled patterns by options and pattern, so that a
// pattern read from documents compiles once per distinct value. It is
// bounded: past regexCacheMax entries it is cleared.
var (
	regexCacheMu sync.Mutex
	regexCache   = map[string]*regexp.Regexp{}
)

// regexCacheMax bounds regexCache.
const regexCacheMax = 1024

// cachedRegex returns the compiled pattern from the cache or compiles it.
func cachedRegex(pattern, options string) (*regexp.Regexp, error) {
	key := options + "\x00" + pattern
	regexCacheMu.Lock()
	re, ok := regexCache[key]
	regexCacheMu.Unlock()
	if ok {
		return re, nil
	}
	re, err := compileRegex(pattern, options)
	if err != nil {
		return nil, err
	}
	regexCacheMu.Lock()
	if len(regexCache) >= regexCacheMax {
		regexCache = map[string]*regexp.Regexp{}
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
func (e *regexExpr) prepare(c *Ctx) (string, *regexp.Regexp, error) {
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
	var re *regexp.Regexp
	if havePattern {
		if re, err = cachedRegex(pattern, options); err != nil {
			return "", nil, mongoerr.Newf(mongoerr.Code(51111), "Invalid Regex in %s: %s", e.name, err.Error())
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
// or an array of match documents ($regexFindAll).
func (e *regexExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, re, err := e.prepare(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	switch e.name {
	case "$regexMatch":
		return Bool(re != nil && re.MatchString(in)), nil
	case "$regexFind":
		if re == nil {
			return Null(), nil
		}
		m := re.FindStringSubmatchIndex(in)
		if m == nil {
			return Null(), nil
		}
		return regexMatchDoc(in, m), nil
	}
	b := NewArrayBuilder(0)
	if re == nil {
		return b.Value(), nil
	}
	total := 0
	err = findAllMongo(re, in, func(m []int) error {
		d := regexMatchDoc(in, m)
		total += len(d.Value)
		if total > maxRegexOutput {
			return mongoerr.Newf(mongoerr.Code(51151), "%s: the size of buffer to store output exceeded the 64MB limit", e.name)
		}
		b.Append(d)
		return nil
	})
	if err != nil {
		return bson.RawValue{}, err
	}
	if b.Size() > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	return b.Value(), nil
}

// findAllMongo calls emit with each match $regexFindAll reports, in order,
// and stops at emit's first error: mongod searches
// again where a non-empty match ended (so an empty match may follow it
// directly), one code point further after an empty match, and never from
// the end of a non-empty input.
//
// Divergence: for patterns whose start depends on the text before it (^,
// \A, \b, \B) Go's own iteration is used, which skips an empty match
// directly after a non-empty one.
func findAllMongo(re *regexp.Regexp, in string, emit func(m []int) error) error {
	if leftContext(re) {
		// Every match document takes more than 32 bytes, so this many
		// matches already exceed the output limit.
		all := re.FindAllStringSubmatchIndex(in, maxRegexOutput/32+1)
		// mongod never starts a search at the end of a non-empty input.
		if n := len(all); n >= 2 && len(in) > 0 {
			last, prev := all[n-1], all[n-2]
			if last[0] == len(in) && last[1] == len(in) && prev[0] == prev[1] && prev[0] < len(in) && prev[0]+cpLen(in[prev[0]]) == len(in) {
				all = all[:n-1]
			}
		}
		for _, m := range all {
			if err := emit(m); err != nil {
				return err
			}
		}
		return nil
	}
	pos := 0
	for {
		m := re.FindStringSubmatchIndex(in[pos:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		if err := emit(m); err != nil {
			return err
		}
		if m[0] == m[1] {
			if m[0] >= len(in) {
				break
			}
			pos = m[0] + cpLen(in[m[0]])
		} else {
			pos = m[1]
		}
		if pos >= len(in) {
			break
		}
	}
	return nil
}

// leftContext reports whether re has an assertion that looks at the text
// before the match position, so that searching a suffix of the input
// would not give the answer a search of the whole input gives.
func leftContext(re *regexp.Regexp) bool {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(r *syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, sub := range r.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(tree)
}

// regexMatchDoc builds {match, idx, captures} for the submatch indexes m;
// idx counts code points, unmatched groups are null.
func regexMatchDoc(in string, m []int) bson.RawValue {
	idx := 0
	for i := 0; i < m[0]; i++ {
		if !isContinuation(in[i]) {
			idx++
		}
	}
	caps := NewArrayBuilder(len(m)/2 - 1)
	for g := 1; g < len(m)/2; g++ {
		if m[2*g] < 0 {
			caps.Append(Null())
		} else {
			caps.Append(String(in[m[2*g]:m[2*g+1]]))
		}
	}
	d := NewDocBuilder()
	d.Append("match", String(in[m[0]:m[1]]))
	d.Append("idx", Int32(int32(idx)))
	d.Append("captures", caps.Value())
	return Doc(d.Doc())
}
