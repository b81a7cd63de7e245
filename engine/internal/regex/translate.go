package regex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxQuantifier is PCRE's largest {n,m} bound.
const maxQuantifier = 65535

// maxDepth bounds group nesting (PCRE's default parenthesis nest limit).
const maxDepth = 250

// mode is the part of the option state the translator itself applies; i,
// m and s are passed to the engine, which knows them too.
type mode struct {
	x, n, m bool
}

// group is an open parenthesis: where it starts in the output and the
// mode to restore when it closes.
type group struct {
	outStart int
	saved    mode
}

// translator rewrites one PCRE pattern into the engine's syntax.
type translator struct {
	p        string
	i        int
	out      []byte
	cur      mode
	stack    []group
	lastAtom int // output offset of the last quantifiable item, -1 if none
	groups   int // capture groups opened so far
	total    int // capture groups in the whole pattern (approximate prescan)
	names    map[string]int
}

// translate returns the engine form of pattern and its number of capture
// groups, or a PCRE-style message for a pattern PCRE rejects or Formwork
// cannot run.
func translate(pattern string, f flags) (string, int, error) {
	t := &translator{p: pattern, cur: mode{x: f.x, m: f.m}, lastAtom: -1, total: countGroups(pattern)}
	if err := t.run(); err != nil {
		return "", 0, err
	}
	return string(t.out), t.groups, nil
}

// countGroups counts the capture groups of p, for the backreference or
// octal decision of \NN. It ignores escapes and classes but not x-mode
// comments, so it may overcount, as only a comment could mislead it.
func countGroups(p string) int {
	n := 0
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(p) && p[i+1] == ']' {
				i++
			}
		case c == '(':
			rest := p[i+1:]
			if !strings.HasPrefix(rest, "?") && !strings.HasPrefix(rest, "*") ||
				strings.HasPrefix(rest, "?<") && !strings.HasPrefix(rest, "?<=") && !strings.HasPrefix(rest, "?<!") ||
				strings.HasPrefix(rest, "?'") || strings.HasPrefix(rest, "?P<") {
				n++
			}
		}
	}
	return n
}

// errorf returns a compile error worded as PCRE2's message (mongod sends
// the message without the offset).
func (t *translator) errorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

func (t *translator) emit(s string) { t.out = append(t.out, s...) }

// run translates the whole pattern.
func (t *translator) run() error {
	for t.i < len(t.p) {
		c := t.p[t.i]
		if t.cur.x {
			if isSpace(c) {
				t.i++
				continue
			}
			if c == '#' {
				for t.i < len(t.p) && t.p[t.i] != '\n' {
					t.i++
				}
				continue
			}
		}
		start := len(t.out)
		var err error
		switch c {
		case '\\':
			err = t.escape()
		case '[':
			err = t.class()
			t.lastAtom = start
		case '(':
			err = t.open()
		case ')':
			err = t.close()
		case '|':
			t.i++
			t.emit("|")
			t.lastAtom = -1
		case '^':
			t.i++
			if t.cur.m {
				// PCRE's ^ does not match after a newline ending the subject.
				t.emit(`(?:^(?!(?<=\n)\z))`)
			} else {
				t.emit("^")
			}
			t.lastAtom = start
		case '$', '.':
			t.i++
			t.out = append(t.out, c)
			t.lastAtom = start
		case '*', '+', '?':
			err = t.quantifier(string(c), 1)
		case '{':
			if q, ok := braceQuantifier(t.p[t.i:]); ok {
				err = t.quantifier(q, len(q))
			} else {
				t.i++
				t.emit(`\{`)
				t.lastAtom = start
			}
		default:
			r, size := utf8.DecodeRuneInString(t.p[t.i:])
			t.i += size
			t.literal(r, false)
			t.lastAtom = start
		}
		if err != nil {
			return err
		}
	}
	if len(t.stack) > 0 {
		return t.errorf("missing closing parenthesis")
	}
	return nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// braceQuantifier returns the {n}, {n,} or {n,m} at the start of s; any
// other brace is a literal in PCRE.
func braceQuantifier(s string) (string, bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return "", false
	}
	body := s[1:end]
	lo, hi, comma := strings.Cut(body, ",")
	if !allDigits(lo) || lo == "" || comma && hi != "" && !allDigits(hi) {
		return "", false
	}
	return s[:end+1], true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quantifier applies q (size bytes of the pattern) to the last item,
// with PCRE's lazy (?) and possessive (+) suffixes.
func (t *translator) quantifier(q string, size int) error {
	if t.lastAtom < 0 {
		return t.errorf("quantifier does not follow a repeatable item")
	}
	if q[0] == '{' {
		lo, hi, comma := strings.Cut(q[1:len(q)-1], ",")
		l, err1 := strconv.Atoi(lo)
		h, err2 := l, error(nil)
		if comma && hi != "" {
			h, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || l > maxQuantifier || h > maxQuantifier {
			return t.errorf("number too big in {} quantifier")
		}
		if h < l {
			return t.errorf("numbers out of order in {} quantifier")
		}
	}
	t.i += size
	suffix := byte(0)
	if t.i < len(t.p) && (t.p[t.i] == '?' || t.p[t.i] == '+') {
		suffix = t.p[t.i]
		t.i++
	}
	t.emit(q)
	switch suffix {
	case '?':
		t.emit("?")
	case '+':
		// X*+ is (?>X*).
		atom := append([]byte("(?>"), t.out[t.lastAtom:]...)
		t.out = append(append(t.out[:t.lastAtom], atom...), ')')
	}
	t.lastAtom = -1
	return nil
}

// literal writes code point r so that the engine reads it as itself, in
// or out of a class.
func (t *translator) literal(r rune, inClass bool) {
	switch {
	case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'):
		t.out = append(t.out, byte(r))
	case r < 0x20 || r == 0x7f:
		t.emit(fmt.Sprintf(`\x%02X`, r))
	case r < utf8.RuneSelf:
		t.out = append(t.out, '\\', byte(r))
	case r <= 0xFFFF:
		t.emit(fmt.Sprintf(`\u%04X`, r))
	default:
		t.out = utf8.AppendRune(t.out, r)
	}
}

// open translates a '(' and what its syntax says it opens.
func (t *translator) open() error {
	if len(t.stack) >= maxDepth {
		return t.errorf("parentheses are too deeply nested")
	}
	rest := t.p[t.i+1:]
	start := len(t.out)
	push := func(s string, consumed int) {
		t.stack = append(t.stack, group{outStart: start, saved: t.cur})
		t.emit(s)
		t.i += consumed
		t.lastAtom = -1
	}
	switch {
	case strings.HasPrefix(rest, "*"):
		return t.verb()
	case !strings.HasPrefix(rest, "?"):
		if t.cur.n {
			push("(?:", 1)
		} else {
			t.groups++
			push(fmt.Sprintf("(?<%d>", t.groups), 1)
		}
		return nil
	}
	rest = rest[1:] // after "(?"
	switch {
	case strings.HasPrefix(rest, "#"):
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return t.errorf("missing ) after (?# comment")
		}
		t.i += 2 + end + 1
		return nil
	case strings.HasPrefix(rest, ":"), strings.HasPrefix(rest, ">"), strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
		push("(?"+rest[:1], 3)
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
		push("(?"+rest[:2], 4)
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "'"), strings.HasPrefix(rest, "P<"):
		skip := 1
		closer := byte('>')
		if rest[0] == '\'' {
			closer = '\''
		} else if rest[0] == 'P' {
			skip = 2
		}
		name, ok := groupName(rest[skip:], closer)
		if !ok {
			return t.errorf("syntax error in subpattern name (missing terminator?)")
		}
		if _, dup := t.names[name]; dup {
			return t.errorf("two named subpatterns have the same name (PCRE2_DUPNAMES not set)")
		}
		if t.names == nil {
			t.names = map[string]int{}
		}
		t.groups++
		t.names[name] = t.groups
		push(fmt.Sprintf("(?<%d>", t.groups), 2+skip+len(name)+1)
	case strings.HasPrefix(rest, "P="):
		name, ok := groupName(rest[2:], ')')
		if !ok {
			return t.errorf("syntax error in subpattern name (missing terminator?)")
		}
		t.i += 4 + len(name) + 1
		return t.backrefName(name)
	case strings.HasPrefix(rest, "("):
		return t.condition(rest[1:])
	case strings.HasPrefix(rest, "|"):
		return t.errorf("branch reset groups (?| are not supported by Formwork")
	case strings.HasPrefix(rest, "C"):
		return t.errorf("callouts are not supported by Formwork")
	case rest == "" || strings.IndexByte("R&+0123456789", rest[0]) >= 0 || strings.HasPrefix(rest, "P>") ||
		rest[0] == '-' && len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9':
		return t.errorf("recursion and subroutine calls are not supported by Formwork")
	default:
		return t.inlineFlags(rest)
	}
	return nil
}

// groupName reads a group name ending with closer.
func groupName(s string, closer byte) (string, bool) {
	end := strings.IndexByte(s, closer)
	if end <= 0 || end > 32 {
		return "", false
	}
	name := s[:end]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return name, true
}

// inlineFlags translates (?imnsx-imnsx) and (?imnsx-imnsx: … ). rest
// follows "(?".
func (t *translator) inlineFlags(rest string) error {
	on, off := "", ""
	next := t.cur
	neg := false
	for k := 0; k < len(rest); k++ {
		c := rest[k]
		switch c {
		case ')', ':':
			engine := ""
			if on != "" || off != "" {
				engine = on
				if off != "" {
					engine += "-" + off
				}
			}
			if c == ')' {
				if engine != "" {
					t.emit("(?" + engine + ")")
				}
				t.cur = next
				t.i += 2 + k + 1
				return nil
			}
			t.stack = append(t.stack, group{outStart: len(t.out), saved: t.cur})
			t.emit("(?" + engine + ":")
			t.cur = next
			t.i += 2 + k + 1
			t.lastAtom = -1
			return nil
		case '-':
			if neg {
				return t.errorf("unrecognized character after (? or (?-")
			}
			neg = true
		case '^':
			if k != 0 {
				return t.errorf("unrecognized character after (? or (?-")
			}
			off = "ims"
			next.m, next.n, next.x = false, false, false
		case 'i', 'm', 's':
			if neg {
				off += string(c)
			} else {
				on += string(c)
			}
			if c == 'm' {
				next.m = !neg
			}
		case 'x':
			next.x = !neg
		case 'n':
			next.n = !neg
		case 'J':
		case 'U':
			return t.errorf("the (?U) option is not supported by Formwork")
		default:
			return t.errorf("unrecognized character after (? or (?-")
		}
	}
	return t.errorf("missing closing parenthesis")
}

// condition translates a conditional group's condition; rest follows
// "(?(".
func (t *translator) condition(rest string) error {
	start := len(t.out)
	switch {
	case strings.HasPrefix(rest, "?"):
		// An assertion condition: the assertion itself is the next group.
		t.stack = append(t.stack, group{outStart: start, saved: t.cur})
		t.emit("(?")
		t.i += 2
		t.lastAtom = -1
		return nil
	}
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return t.errorf("missing closing parenthesis for condition")
	}
	cond := rest[:end]
	n := 0
	switch {
	case cond == "" || strings.HasPrefix(cond, "R") || cond == "DEFINE":
		return t.errorf("recursion and DEFINE conditions are not supported by Formwork")
	case allDigits(cond):
		n, _ = strconv.Atoi(cond)
	case (cond[0] == '+' || cond[0] == '-') && allDigits(cond[1:]) && len(cond) > 1:
		k, _ := strconv.Atoi(cond[1:])
		if cond[0] == '+' {
			n = t.groups + k
		} else {
			n = t.groups - k + 1
		}
	default:
		name := cond
		if len(name) >= 2 && (name[0] == '<' && name[len(name)-1] == '>' || name[0] == '\'' && name[len(name)-1] == '\'') {
			name = name[1 : len(name)-1]
		}
		num, ok := t.names[name]
		if !ok {
			return t.errorf("reference to non-existent subpattern")
		}
		n = num
	}
	if n <= 0 || n > t.total {
		return t.errorf("reference to non-existent subpattern")
	}
	t.stack = append(t.stack, group{outStart: start, saved: t.cur})
	t.emit(fmt.Sprintf("(?(%d)", n))
	t.i += 3 + end + 1
	t.lastAtom = -1
	return nil
}

// verb translates a (*VERB): (*FAIL) and (*F) never match, (*UTF) is
// always on; Formwork runs no other.
func (t *translator) verb() error {
	end := strings.IndexByte(t.p[t.i:], ')')
	if end < 0 {
		return t.errorf("(*VERB) not terminated")
	}
	switch name := t.p[t.i+2 : t.i+end]; name {
	case "FAIL", "F":
		t.emit("(?!)")
		t.lastAtom = -1
	case "UTF", "UTF8":
	default:
		return t.errorf("(*%s) is not supported by Formwork", name)
	}
	t.i += end + 1
	return nil
}

// close translates a ')'.
func (t *translator) close() error {
	if len(t.stack) == 0 {
		return t.errorf("unmatched closing parenthesis")
	}
	g := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	t.cur = g.saved
	t.emit(")")
	t.i++
	t.lastAtom = g.outStart
	return nil
}

// backrefNum writes a reference to capture group n.
func (t *translator) backrefNum(n, start int) error {
	if n <= 0 || n > t.total {
		return t.errorf("reference to non-existent subpattern")
	}
	t.emit(fmt.Sprintf(`\k<%d>`, n))
	t.lastAtom = start
	return nil
}

// backrefName writes a reference to the named group name.
func (t *translator) backrefName(name string) error {
	start := len(t.out)
	n, ok := t.names[name]
	if !ok {
		return t.errorf("reference to non-existent subpattern")
	}
	return t.backrefNum(n, start)
}
