package regex

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// escKind says what an escape sequence denotes.
type escKind int

const (
	escLiteral escKind = iota // one code point
	escSet                    // a set of code points
	escDone                   // already written (assertions, references)
)

// escResult is a parsed escape: a code point or a set.
type escResult struct {
	kind escKind
	r    rune
	set  set
}

// escape translates the escape sequence at t.i outside a class.
func (t *translator) escape() error {
	start := len(t.out)
	if strings.HasPrefix(t.p[t.i:], `\Q`) {
		t.i += 2
		end := strings.Index(t.p[t.i:], `\E`)
		lit := t.p[t.i:]
		if end >= 0 {
			lit = t.p[t.i : t.i+end]
			t.i += end + 2
		} else {
			t.i = len(t.p)
		}
		if lit == "" {
			return nil
		}
		for _, r := range lit {
			t.lastAtom = len(t.out)
			t.literal(r, false)
		}
		return nil
	}
	if strings.HasPrefix(t.p[t.i:], `\E`) {
		t.i += 2
		return nil
	}
	e, err := t.parseEscape(false)
	if err != nil {
		return err
	}
	switch e.kind {
	case escLiteral:
		t.literal(e.r, false)
		t.lastAtom = start
	case escSet:
		if err := t.writeSet(e.set, false); err != nil {
			return err
		}
		t.lastAtom = start
	}
	return nil
}

// ASCII word boundary assertions (mongod compiles without UCP).
const (
	asciiBoundary    = `(?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))`
	asciiNonBoundary = `(?:(?<=[A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<![A-Za-z0-9_])(?![A-Za-z0-9_]))`
)

// parseEscape reads the escape at t.i (a backslash) and returns what it
// denotes; assertions and backreferences outside a class are written
// directly (escDone).
func (t *translator) parseEscape(inClass bool) (escResult, error) {
	t.i++
	if t.i >= len(t.p) {
		return escResult{}, t.errorf(`\ at end of pattern`)
	}
	c := t.p[t.i]
	t.i++
	lit := func(r rune) (escResult, error) { return escResult{kind: escLiteral, r: r}, nil }
	done := func(s string) (escResult, error) {
		if inClass {
			return escResult{}, t.errorf(`escape sequence is invalid in character class`)
		}
		t.lastAtom = len(t.out)
		t.emit(s)
		return escResult{kind: escDone}, nil
	}
	if s, ok := shorthand(c); ok {
		return escResult{kind: escSet, set: s}, nil
	}
	switch c {
	case 'a':
		return lit(7)
	case 'e':
		return lit(0x1b)
	case 'f':
		return lit('\f')
	case 'n':
		return lit('\n')
	case 'r':
		return lit('\r')
	case 't':
		return lit('\t')
	case 'b':
		if inClass {
			return lit(8)
		}
		return done(asciiBoundary)
	case 'B':
		return done(asciiNonBoundary)
	case 'A':
		return done(`\A`)
	case 'z':
		return done(`\z`)
	case 'Z':
		return done(`\Z`)
	case 'G':
		return done(`\G`)
	case 'N':
		if strings.HasPrefix(t.p[t.i:], "{U+") {
			end := strings.IndexByte(t.p[t.i:], '}')
			if end < 0 {
				return escResult{}, t.errorf(`\N{U+dddd} is not terminated`)
			}
			return t.codePoint(t.p[t.i+3:t.i+end], 16, end+1)
		}
		return done(`[^\n]`)
	case 'R':
		return done(`(?>\r\n|[\n\x0B\f\r\u0085\u2028\u2029])`)
	case 'X':
		return done(`(?>\P{M}\p{M}*)`)
	case 'C':
		return done(`(?s:.)`)
	case 'K':
		return escResult{}, t.errorf(`\K is not supported by Formwork`)
	case 'c':
		if t.i >= len(t.p) {
			return escResult{}, t.errorf(`\c at end of pattern`)
		}
		x := t.p[t.i]
		t.i++
		if x >= 'a' && x <= 'z' {
			x -= 'a' - 'A'
		}
		if x < 32 || x > 126 {
			return escResult{}, t.errorf(`\c must be followed by a printable ASCII character`)
		}
		return lit(rune(x ^ 0x40))
	case 'x':
		if strings.HasPrefix(t.p[t.i:], "{") {
			end := strings.IndexByte(t.p[t.i:], '}')
			if end < 0 {
				return escResult{}, t.errorf(`missing terminating } in \x{}`)
			}
			return t.codePoint(t.p[t.i+1:t.i+end], 16, end+1)
		}
		n := 0
		for n < 2 && t.i+n < len(t.p) && isHex(t.p[t.i+n]) {
			n++
		}
		v, _ := strconv.ParseUint("0"+t.p[t.i:t.i+n], 16, 32)
		t.i += n
		return lit(rune(v))
	case 'o':
		if !strings.HasPrefix(t.p[t.i:], "{") {
			return escResult{}, t.errorf(`missing opening brace after \o`)
		}
		end := strings.IndexByte(t.p[t.i:], '}')
		if end < 0 {
			return escResult{}, t.errorf(`missing terminating } in \o{}`)
		}
		return t.codePoint(t.p[t.i+1:t.i+end], 8, end+1)
	case '0':
		n := 0
		for n < 2 && t.i+n < len(t.p) && t.p[t.i+n] >= '0' && t.p[t.i+n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint("0"+t.p[t.i:t.i+n], 8, 32)
		t.i += n
		return lit(rune(v))
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return t.digitEscape(c, inClass)
	case 'g':
		if inClass {
			return escResult{}, t.errorf(`escape sequence is invalid in character class`)
		}
		return escResult{kind: escDone}, t.gReference()
	case 'k':
		if inClass {
			return escResult{}, t.errorf(`escape sequence is invalid in character class`)
		}
		if t.i >= len(t.p) {
			return escResult{}, t.errorf(`\k is not followed by a braced, angle-bracketed, or quoted name`)
		}
		closer := map[byte]byte{'<': '>', '\'': '\'', '{': '}'}[t.p[t.i]]
		name, ok := "", false
		if closer != 0 {
			name, ok = groupName(t.p[t.i+1:], closer)
		}
		if !ok {
			return escResult{}, t.errorf(`\k is not followed by a braced, angle-bracketed, or quoted name`)
		}
		t.i += len(name) + 2
		return escResult{kind: escDone}, t.backrefName(name)
	case 'p', 'P':
		s, err := t.property(c == 'P')
		return escResult{kind: escSet, set: s}, err
	case 'L', 'l', 'U', 'u':
		return escResult{}, t.errorf(`PCRE2 does not support \F, \L, \l, \N{name}, \U, or \u`)
	}
	if c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return escResult{}, t.errorf(`unrecognized character follows \`)
	}
	// An escaped non-alphanumeric character is itself.
	t.i--
	r, size := utf8.DecodeRuneInString(t.p[t.i:])
	t.i += size
	return lit(r)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// codePoint parses digits in base as a code point and skips consumed
// bytes of the pattern.
func (t *translator) codePoint(digits string, base, consumed int) (escResult, error) {
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil || digits == "" {
		return escResult{}, t.errorf("non-hex character in \\x{} (closing brace missing?)")
	}
	if v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
		return escResult{}, t.errorf("character code point value in \\x{} or \\o{} is too large")
	}
	t.i += consumed
	return escResult{kind: escLiteral, r: rune(v)}, nil
}

// digitEscape reads \1 … \9 and what follows: a backreference outside a
// class when the number is below 10, starts with 8 or 9, or names an
// existing group; otherwise up to three octal digits.
func (t *translator) digitEscape(first byte, inClass bool) (escResult, error) {
	begin := t.i - 1
	end := begin
	for end < len(t.p) && t.p[end] >= '0' && t.p[end] <= '9' {
		end++
	}
	num, err := strconv.Atoi(t.p[begin:end])
	if !inClass && (err != nil || num < 10 || first >= '8' || num <= t.total) {
		t.i = end
		if err != nil {
			return escResult{}, t.errorf("subpattern number is too big")
		}
		return escResult{kind: escDone}, t.backrefNum(num, len(t.out))
	}
	if first >= '8' {
		return escResult{kind: escLiteral, r: rune(first)}, nil
	}
	n := 0
	for n < 3 && begin+n < len(t.p) && t.p[begin+n] >= '0' && t.p[begin+n] <= '7' {
		n++
	}
	v, _ := strconv.ParseUint(t.p[begin:begin+n], 8, 32)
	t.i = begin + n
	return escResult{kind: escLiteral, r: rune(v)}, nil
}

// gReference translates \g forms: \gN, \g{N}, \g-N, \g{-N}, \g{name};
// \g<…> and \g'…' are subroutine calls, which Formwork does not run.
func (t *translator) gReference() error {
	rest := t.p[t.i:]
	body := ""
	switch {
	case strings.HasPrefix(rest, "{"):
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return t.errorf(`\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number`)
		}
		body = rest[1:end]
		t.i += end + 1
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "'"):
		return t.errorf("recursion and subroutine calls are not supported by Formwork")
	default:
		k := 0
		if k < len(rest) && (rest[k] == '-' || rest[k] == '+') {
			k++
		}
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		body = rest[:k]
		t.i += k
	}
	start := len(t.out)
	if body == "" {
		return t.errorf(`\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number`)
	}
	if body[0] == '-' || body[0] == '+' || allDigits(body) {
		n, err := strconv.Atoi(body)
		if err != nil {
			return t.errorf("subpattern number is too big")
		}
		if body[0] == '-' {
			n = t.groups + n + 1
		} else if body[0] == '+' {
			return t.errorf(`\g+ references are not supported`)
		}
		return t.backrefNum(n, start)
	}
	return t.backrefName(body)
}

// property reads \p / \P's name: \pL, \p{Lu}, \p{^Lu}, \p{Greek}, and
// PCRE's special names Any, L&, Xan, Xsp, Xps, Xwd.
func (t *translator) property(negate bool) (set, error) {
	name := ""
	if strings.HasPrefix(t.p[t.i:], "{") {
		end := strings.IndexByte(t.p[t.i:], '}')
		if end < 0 {
			return set{}, t.errorf(`malformed \P or \p sequence`)
		}
		name = t.p[t.i+1 : t.i+end]
		t.i += end + 1
	} else if t.i < len(t.p) {
		name = t.p[t.i : t.i+1]
		t.i++
	}
	if strings.HasPrefix(name, "^") {
		negate = !negate
		name = name[1:]
	}
	s := set{negate: negate}
	switch name {
	case "":
		return set{}, t.errorf(`malformed \P or \p sequence`)
	case "Any":
		s.ranges = []rng{{0, utf8.MaxRune}}
	case "L&", "LC":
		s.props = []string{"Lu", "Ll", "Lt"}
	case "Xan":
		s.props = []string{"L", "N"}
	case "Xwd":
		s.props = []string{"L", "N"}
		s.ranges = []rng{{'_', '_'}}
	case "Xsp", "Xps":
		s.props = []string{"Z"}
		s.ranges = []rng{{'\t', '\r'}}
	default:
		canonical, ok := canonicalProperty(name)
		if !ok {
			return set{}, t.errorf(`unknown property name after \P or \p`)
		}
		s.props = []string{canonical}
	}
	return s, nil
}
