package match

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// maxPatternSize is mongod's limit on a regular expression's length.
const maxPatternSize = 32764

// errRegexInvalid is mongod's code for a pattern PCRE does not compile;
// Formwork also uses it for PCRE constructs RE2 cannot run.
const errRegexInvalid mongoerr.Code = 51091

// errRegexFlag is mongod's code for an unknown regex option letter.
const errRegexFlag mongoerr.Code = 51108

// regexTest is a compiled regular expression with the pattern and options
// as the user wrote them (a stored regex matches only an identical one).
type regexTest struct {
	pattern, options string
	re               *regexp.Regexp
}

func compileRegexValue(v bson.RawValue) (*regexTest, error) {
	p, o := v.Regex()
	return compileRegex(p, o)
}

// compileRegex validates and compiles a PCRE pattern with MongoDB options
// (i, m, s, x, u).
func compileRegex(pattern, options string) (*regexTest, error) {
	if len(pattern) > maxPatternSize {
		return nil, badValue("Regular expression is too long")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, badValue("Regular expression cannot contain an embedded null byte")
	}
	if strings.IndexByte(options, 0) >= 0 {
		return nil, badValue("Regular expression options string cannot contain an embedded null byte")
	}
	flags := ""
	extended := false
	for _, f := range options {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags, f) {
				flags += string(f)
			}
		case 'x':
			extended = true
		case 'u':
			// UTF-8 mode is always on.
		default:
			return nil, mongoerr.Newf(errRegexFlag, "invalid flag in regex options: %c", f)
		}
	}
	translated, err := translatePCRE(pattern, extended)
	if err != nil {
		return nil, mongoerr.Newf(errRegexInvalid, "Regular expression is invalid: %s", err.Error())
	}
	if flags != "" {
		translated = "(?" + flags + ")" + translated
	}
	re, err := regexp.Compile(translated)
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*syntax.Error); ok {
			msg = string(e.Code) + ": " + e.Expr
		}
		return nil, mongoerr.Newf(errRegexInvalid, "Regular expression is invalid: %s", msg)
	}
	return &regexTest{pattern: pattern, options: options, re: re}, nil
}

// test is mongod's RegexMatchExpression::matchesSingleElement: strings and
// symbols are searched, a stored regex matches when pattern and options
// are identical, anything else never matches.
func (r *regexTest) test(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString:
		return r.re.MatchString(v.StringValue())
	case bson.TypeSymbol:
		return r.re.MatchString(v.Symbol())
	case bson.TypeRegex:
		p, o := v.Regex()
		return p == r.pattern && o == r.options
	}
	return false
}

// Character sets PCRE gives \s, \h and \v (RE2's \s lacks VT, and RE2 has
// no \h, and reads \v as the VT character).
const (
	pcreSpace  = `\t\n\x0B\f\r `
	pcreHSpace = `\t \x{A0}\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}`
	pcreVSpace = `\n\x0B\f\r\x{85}\x{2028}\x{2029}`
)

// translatePCRE rewrites PCRE syntax into RE2 syntax with the same meaning
// for a yes/no search, or returns an error for constructs RE2 cannot run.
// It rewrites: $ outside classes (PCRE also matches before a final
// newline), \Z, \s \S \h \H \v \V \R, \e, \a, \cX, (?#comments), \b in a
// class (backspace), and the x option (whitespace and #-comments outside
// classes dropped). It refuses backreferences, \G, \K, \X, \C, \g, \k, \N
// and inline (?x); RE2 itself refuses lookaround, atomic groups, possessive
// quantifiers, recursion and conditionals.
//
// Divergence: under the m option PCRE's ^ does not match after a newline
// that ends the subject and RE2's does; only empty lines at the very end
// of a string can tell them apart.
func translatePCRE(p string, extended bool) (string, error) {
	var b strings.Builder
	inClass := false
	classStart := 0 // position in p just after the class's '[' or '[^'
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				return "", fmt.Errorf("\\ at end of pattern")
			}
			i++
			e := p[i]
			if e == 'Q' {
				end := strings.Index(p[i+1:], `\E`)
				lit := p[i+1:]
				if end >= 0 {
					lit = p[i+1 : i+1+end]
					i = i + 1 + end + 1
				} else {
					i = len(p)
				}
				if inClass {
					for _, r := range lit {
						b.WriteString(regexp.QuoteMeta(string(r)))
					}
				} else {
					b.WriteString(regexp.QuoteMeta(lit))
				}
				continue
			}
			if err := translateEscape(&b, e, p, &i, inClass); err != nil {
				return "", err
			}
			continue
		}
		if inClass {
			switch {
			case c == ']' && i > classStart:
				inClass = false
				b.WriteByte(c)
			case c == '[' && i+1 < len(p) && p[i+1] == ':':
				end := strings.Index(p[i:], ":]")
				if end < 0 {
					b.WriteString(`\[`)
					continue
				}
				b.WriteString(p[i : i+end+2])
				i += end + 1
			case c == '[':
				b.WriteString(`\[`)
			default:
				b.WriteByte(c)
			}
			continue
		}
		if extended {
			switch c {
			case ' ', '\t', '\n', '\r', '\f', '\v':
				continue
			case '#':
				for i < len(p) && p[i] != '\n' {
					i++
				}
				continue
			}
		}
		switch c {
		case '[':
			inClass = true
			b.WriteByte(c)
			classStart = i + 1
			if classStart < len(p) && p[classStart] == '^' {
				b.WriteByte('^')
				i++
				classStart++
			}
		case '$':
			b.WriteString(`(?:$|\n\z)`)
		case '(':
			if strings.HasPrefix(p[i:], "(?#") {
				end := strings.IndexByte(p[i:], ')')
				if end < 0 {
					return "", fmt.Errorf("missing ) after (?# comment")
				}
				i += end
				continue
			}
			if strings.HasPrefix(p[i:], "(?") {
				if err := checkInlineFlags(p[i+2:]); err != nil {
					return "", err
				}
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("missing terminating ] for character class")
	}
	return b.String(), nil
}

// checkInlineFlags refuses an inline option group that sets x, which RE2
// does not know. rest follows "(?".
func checkInlineFlags(rest string) error {
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == 'x':
			return fmt.Errorf("inline (?x) is not supported by Formwork's regex engine")
		case c == ')' || c == ':':
			return nil
		case strings.IndexByte("imsU-", c) < 0:
			return nil
		}
	}
	return nil
}

// translateEscape writes the RE2 form of the escape \e; *i points at e and
// may be advanced past extra characters (\cX).
func translateEscape(b *strings.Builder, e byte, p string, i *int, inClass bool) error {
	switch e {
	case 's', 'S', 'h', 'v', 'H', 'V':
		set := map[byte]string{'s': pcreSpace, 'S': pcreSpace, 'h': pcreHSpace, 'H': pcreHSpace, 'v': pcreVSpace, 'V': pcreVSpace}[e]
		negated := e == 'S' || e == 'H' || e == 'V'
		switch {
		case inClass && e == 'S':
			b.WriteString("[:^space:]")
		case inClass && negated:
			return fmt.Errorf("\\%c inside a character class is not supported by Formwork's regex engine", e)
		case inClass:
			b.WriteString(set)
		case negated:
			b.WriteString("[^" + set + "]")
		default:
			b.WriteString("[" + set + "]")
		}
	case 'R':
		if inClass {
			return fmt.Errorf("\\R is not allowed in a character class")
		}
		b.WriteString(`(?:\r\n|[` + pcreVSpace + `])`)
	case 'Z':
		if inClass {
			return fmt.Errorf("\\Z is not allowed in a character class")
		}
		b.WriteString(`(?:\n?\z)`)
	case 'e':
		b.WriteString(`\x1B`)
	case 'a':
		b.WriteString(`\x07`)
	case 'b':
		if inClass {
			b.WriteString(`\x08`)
		} else {
			b.WriteString(`\b`)
		}
	case 'c':
		if *i+1 >= len(p) {
			return fmt.Errorf("\\c at end of pattern")
		}
		*i++
		x := p[*i]
		if x >= 'a' && x <= 'z' {
			x -= 'a' - 'A'
		}
		if x > 127 {
			return fmt.Errorf("\\c must be followed by an ASCII character")
		}
		fmt.Fprintf(b, `\x{%X}`, x^0x40)
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return fmt.Errorf("backreferences are not supported by Formwork's regex engine")
	case 'G', 'K', 'X', 'C', 'g', 'k', 'N':
		return fmt.Errorf("\\%c is not supported by Formwork's regex engine", e)
	case 'E':
		// A \E without \Q is ignored, as in PCRE.
	default:
		if e < utf8.RuneSelf && (e >= 'a' && e <= 'z' || e >= 'A' && e <= 'Z' || e >= '0' && e <= '9') {
			b.WriteByte('\\')
			b.WriteByte(e)
			return nil
		}
		// An escaped non-alphanumeric character is itself.
		r, size := utf8.DecodeRuneInString(p[*i:])
		*i += size - 1
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	return nil
}
