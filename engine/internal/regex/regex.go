package regex

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/dlclark/regexp2/syntax"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// MaxPatternSize is mongod's limit on a regular expression's length in
// bytes (pcre's MaxPatternSize).
const MaxPatternSize = 32764

// DefaultTimeout bounds one match. mongod bounds PCRE by a backtracking
// count instead; both stop catastrophic patterns within a fraction of a
// second.
const DefaultTimeout = 250 * time.Millisecond

// Codes mongod uses for regular expressions.
const (
	// CodeInvalid is mongod's code for a pattern that does not compile.
	CodeInvalid mongoerr.Code = 51091
	// CodeBadFlag is mongod's code for an unknown option letter.
	CodeBadFlag mongoerr.Code = 51108
	// CodeExec is mongod's code for a match that fails to run in the
	// expression operators ($regexMatch, $regexFind, $regexFindAll).
	CodeExec mongoerr.Code = 51156
)

// ErrTimeout is returned by a match that ran past its time limit.
var ErrTimeout = errors.New("regular expression match exceeded its time limit")

// Regexp is a compiled MongoDB regular expression. It is immutable and safe
// for concurrent use.
type Regexp struct {
	pattern, options string
	expr             string // the translated pattern
	opt              regexp2.RegexOptions
	re               *regexp2.Regexp
	groups           int
}

// Compile validates options and compiles pattern. opName prefixes the
// message of an option error as mongod does ("$regexMatch invalid flag in
// regex options: g"); the match language passes "", as mongod does. Errors are
// *mongoerr.Error with BadValue, CodeBadFlag or CodeInvalid.
func Compile(opName, pattern, options string) (*Regexp, error) {
	if len(pattern) > MaxPatternSize {
		return nil, mongoerr.New(mongoerr.BadValue, "Regular expression is too long")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Regular expression cannot contain an embedded null byte")
	}
	if strings.IndexByte(options, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Regular expression options string cannot contain an embedded null byte")
	}
	fl, err := parseOptions(opName, options)
	if err != nil {
		return nil, err
	}
	out, groups, err := translate(pattern, fl)
	if err != nil {
		return nil, mongoerr.Newf(CodeInvalid, "Regular expression is invalid: %s", err.Error())
	}
	opt := regexp2.RegexOptions(regexp2.None)
	if fl.i {
		opt |= regexp2.IgnoreCase
	}
	if fl.m {
		opt |= regexp2.Multiline
	}
	if fl.s {
		opt |= regexp2.Singleline
	}
	re, err := compileEngine(out, opt)
	if err != nil {
		return nil, mongoerr.Newf(CodeInvalid, "Regular expression is invalid: %s", engineMessage(err))
	}
	re.MatchTimeout = DefaultTimeout
	return &Regexp{pattern: pattern, options: options, expr: out, opt: opt, re: re, groups: groups}, nil
}

// compileEngine compiles translated syntax. The engine panics on a few
// inputs instead of returning an error; such a pattern is reported as
// invalid rather than taking the connection down.
func compileEngine(expr string, opt regexp2.RegexOptions) (re *regexp2.Regexp, err error) {
	defer func() {
		if p := recover(); p != nil {
			re, err = nil, fmt.Errorf("%v", p)
		}
	}()
	return regexp2.Compile(expr, opt)
}

// engineMessage returns the engine's reason without its prefix and the
// translated pattern it quotes, which is not the user's.
func engineMessage(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		if len(se.Args) == 0 {
			return se.Code.String()
		}
		return fmt.Sprintf(se.Code.String(), se.Args...)
	}
	return err.Error()
}

// flags are the parsed option letters.
type flags struct {
	i, m, s, x bool
}

// ValidateOptions checks MongoDB's option letters (i, m, s, x, u; repeats
// allowed) and returns CodeBadFlag for any other, as pcre_util's
// flagsToOptions does.
func ValidateOptions(opName, options string) error {
	_, err := parseOptions(opName, options)
	return err
}

// parseOptions is ValidateOptions returning the letters it read.
func parseOptions(opName, options string) (flags, error) {
	var f flags
	for _, c := range options {
		switch c {
		case 'i':
			f.i = true
		case 'm':
			f.m = true
		case 's':
			f.s = true
		case 'x':
			f.x = true
		case 'u':
		default:
			// With an empty opName mongod's message starts with a space.
			return f, mongoerr.Newf(CodeBadFlag, "%s invalid flag in regex options: %c", opName, c)
		}
	}
	return f, nil
}

// Pattern returns the pattern as the user wrote it.
func (r *Regexp) Pattern() string { return r.pattern }

// Options returns the option letters as the user wrote them.
func (r *Regexp) Options() string { return r.options }

// NumCaptures returns the number of capture groups in the pattern.
func (r *Regexp) NumCaptures() int { return r.groups }

// WithTimeout returns a copy of r whose matches stop after d (d <= 0 keeps
// DefaultTimeout).
func (r *Regexp) WithTimeout(d time.Duration) *Regexp {
	if d <= 0 {
		d = DefaultTimeout
	}
	re, err := compileEngine(r.expr, r.opt)
	if err != nil {
		return r
	}
	re.MatchTimeout = d
	c := *r
	c.re = re
	return &c
}

// MatchString reports whether s contains a match. The error is ErrTimeout
// when the match ran past the time limit.
func (r *Regexp) MatchString(s string) (bool, error) {
	ok, err := r.re.MatchString(s)
	if err != nil {
		return false, ErrTimeout
	}
	return ok, nil
}

// Capture is one capture group of a match. Offsets are into the subject:
// Start and End in bytes, CodePoint in code points (I3).
type Capture struct {
	Matched    bool
	Start, End int
	CodePoint  int
	Text       string
}

// Match is one match: the whole match and its capture groups, 1..n in
// pattern order (Captures[0] is group 1).
type Match struct {
	Capture
	Captures []Capture
}

// Find returns the first match in s at or after byte offset from, nil when
// there is none.
func (r *Regexp) Find(s string, from int) (*Match, error) {
	ms, err := r.find(s, from, 1)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	return &ms[0], nil
}

// FindAll returns up to limit successive non-overlapping matches in s (an
// empty match advances the search by one code point). limit <= 0 means no
// other bound than len(s)+1 matches.
func (r *Regexp) FindAll(s string, limit int) ([]Match, error) {
	if limit <= 0 || limit > len(s)+1 {
		limit = len(s) + 1
	}
	return r.find(s, 0, limit)
}

// find runs the engine on s's code points and converts offsets back to
// bytes.
func (r *Regexp) find(s string, from, limit int) ([]Match, error) {
	if from < 0 || from > len(s) {
		return nil, nil
	}
	runes, bytePos := decode(s)
	startCP := 0
	for startCP < len(runes) && bytePos[startCP] < from {
		startCP++
	}
	m, err := r.re.FindRunesMatchStartingAt(runes, startCP)
	var out []Match
	for err == nil && m != nil && len(out) < limit {
		out = append(out, r.convert(m, s, bytePos))
		m, err = r.re.FindNextMatch(m)
	}
	if err != nil {
		return nil, ErrTimeout
	}
	return out, nil
}

// convert turns an engine match into a Match.
func (r *Regexp) convert(m *regexp2.Match, s string, bytePos []int) Match {
	cap := func(idx, length int) Capture {
		b, e := bytePos[idx], bytePos[idx+length]
		return Capture{Matched: true, Start: b, End: e, CodePoint: idx, Text: s[b:e]}
	}
	out := Match{Capture: cap(m.Index, m.Length)}
	if r.groups > 0 {
		out.Captures = make([]Capture, r.groups)
		for n := 1; n <= r.groups; n++ {
			g := m.GroupByNumber(n)
			if g == nil || len(g.Captures) == 0 {
				continue
			}
			out.Captures[n-1] = cap(g.Index, g.Length)
		}
	}
	return out
}

// decode splits s into code points as the engine sees them (an invalid
// byte is one U+FFFD) and returns each one's byte offset, with len(s)
// appended.
func decode(s string) ([]rune, []int) {
	runes := make([]rune, 0, len(s))
	pos := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, c)
		pos = append(pos, i)
		i += size
	}
	return runes, append(pos, len(s))
}

// ExecError is the error mongod's expression operators return when a match
// fails to run (here: ErrTimeout), with opName such as "$regexFind".
func ExecError(opName string, err error) error {
	return mongoerr.Newf(CodeExec, "Error occurred while executing the regular expression in %s. Result code: %s", opName, err.Error())
}
