package regex

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// rng is an inclusive range of code points.
type rng struct{ lo, hi rune }

// set is a class item: ranges and Unicode property names, possibly
// negated.
type set struct {
	ranges []rng
	props  []string
	negate bool
}

// PCRE's ASCII classes (no UCP).
var (
	digitRanges  = []rng{{'0', '9'}}
	wordRanges   = []rng{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	spaceRanges  = []rng{{'\t', '\r'}, {' ', ' '}}
	hspaceRanges = []rng{{'\t', '\t'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x180E, 0x180E}, {0x2000, 0x200A}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}}
	vspaceRanges = []rng{{'\n', '\r'}, {0x85, 0x85}, {0x2028, 0x2029}}
)

// posixClasses are the [:name:] classes, ASCII as PCRE has them without
// UCP.
var posixClasses = map[string][]rng{
	"alnum":  {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}},
	"alpha":  {{'A', 'Z'}, {'a', 'z'}},
	"ascii":  {{0, 0x7f}},
	"blank":  {{'\t', '\t'}, {' ', ' '}},
	"cntrl":  {{0, 0x1f}, {0x7f, 0x7f}},
	"digit":  {{'0', '9'}},
	"graph":  {{'!', '~'}},
	"lower":  {{'a', 'z'}},
	"print":  {{' ', '~'}},
	"punct":  {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}},
	"space":  {{'\t', '\r'}, {' ', ' '}},
	"upper":  {{'A', 'Z'}},
	"word":   {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}},
	"xdigit": {{'0', '9'}, {'A', 'F'}, {'a', 'f'}},
}

// shorthand returns the set of \d \D \w \W \s \S \h \H \v \V.
func shorthand(c byte) (set, bool) {
	var r []rng
	switch c | 0x20 {
	case 'd':
		r = digitRanges
	case 'w':
		r = wordRanges
	case 's':
		r = spaceRanges
	case 'h':
		r = hspaceRanges
	case 'v':
		r = vspaceRanges
	default:
		return set{}, false
	}
	return set{ranges: r, negate: c >= 'A' && c <= 'Z'}, true
}

// writeSet writes s as a class body item (inClass) or as a whole class.
func (t *translator) writeSet(s set, inClass bool) error {
	if !inClass {
		if s.negate {
			t.emit("[^")
		} else {
			t.emit("[")
		}
		t.setBody(s.ranges, s.props, false)
		t.emit("]")
		return nil
	}
	switch {
	case !s.negate:
		t.setBody(s.ranges, s.props, false)
	case len(s.props) == 0:
		t.setBody(complement(s.ranges), nil, false)
	case len(s.props) == 1 && len(s.ranges) == 0:
		t.setBody(nil, s.props, true)
	default:
		return t.errorf("this negated property is not supported inside a class by Formwork")
	}
	return nil
}

// setBody writes ranges and properties inside a class.
func (t *translator) setBody(ranges []rng, props []string, negProps bool) {
	for _, r := range ranges {
		t.literal(r.lo, true)
		if r.hi != r.lo {
			t.emit("-")
			t.literal(r.hi, true)
		}
	}
	for _, p := range props {
		if negProps {
			t.emit(fmt.Sprintf(`\P{%s}`, p))
		} else {
			t.emit(fmt.Sprintf(`\p{%s}`, p))
		}
	}
}

// complement returns the code points not in rs.
func complement(rs []rng) []rng {
	sorted := append([]rng(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].lo < sorted[j].lo })
	var out []rng
	next := rune(0)
	for _, r := range sorted {
		if r.lo > next {
			out = append(out, rng{next, r.lo - 1})
		}
		if r.hi+1 > next {
			next = r.hi + 1
		}
	}
	if next <= utf8.MaxRune {
		out = append(out, rng{next, utf8.MaxRune})
	}
	return out
}

// class translates a bracketed class at t.i.
func (t *translator) class() error {
	t.i++
	t.emit("[")
	if t.i < len(t.p) && t.p[t.i] == '^' {
		t.emit("^")
		t.i++
	}
	first := true
	for {
		if t.i >= len(t.p) {
			return t.errorf("missing terminating ] for character class")
		}
		c := t.p[t.i]
		if c == ']' && !first {
			t.i++
			t.emit("]")
			return nil
		}
		first = false
		if c == '[' && t.i+1 < len(t.p) && (t.p[t.i+1] == ':' || t.p[t.i+1] == '.' || t.p[t.i+1] == '=') {
			if ok, err := t.posix(); ok || err != nil {
				if err != nil {
					return err
				}
				continue
			}
		}
		if c == '\\' && (t.i+1 < len(t.p)) && (t.p[t.i+1] == 'Q' || t.p[t.i+1] == 'E') {
			if err := t.classQuote(); err != nil {
				return err
			}
			continue
		}
		lo, isChar, err := t.classAtom()
		if err != nil {
			return err
		}
		if !isChar {
			continue
		}
		// A range lo-hi, unless the '-' ends the class.
		if t.i+1 < len(t.p) && t.p[t.i] == '-' && t.p[t.i+1] != ']' {
			save, saveOut := t.i, len(t.out)
			t.i++
			hi, hiChar, err := t.classAtomValue()
			if err != nil {
				return err
			}
			if hiChar {
				if hi < lo {
					return t.errorf("range out of order in character class")
				}
				t.emit("-")
				t.literal(hi, true)
				continue
			}
			// [a-\d]: the '-' is a literal; write it, then the set.
			t.i, t.out = save, t.out[:saveOut]
			t.i++
			t.emit(`\-`)
		}
	}
}

// classQuote writes \Q…\E inside a class as literals.
func (t *translator) classQuote() error {
	if t.p[t.i+1] == 'E' {
		t.i += 2
		return nil
	}
	t.i += 2
	end := indexFrom(t.p, `\E`, t.i)
	lit := t.p[t.i:]
	if end >= 0 {
		lit = t.p[t.i:end]
		t.i = end + 2
	} else {
		t.i = len(t.p)
	}
	for _, r := range lit {
		t.literal(r, true)
	}
	return nil
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// classAtom writes one class item and returns its code point when it is a
// single character (so a range may follow).
func (t *translator) classAtom() (rune, bool, error) {
	r, isChar, s, err := t.classItem()
	if err != nil {
		return 0, false, err
	}
	if isChar {
		t.literal(r, true)
		return r, true, nil
	}
	return 0, false, t.writeSet(s, true)
}

// classAtomValue reads the upper end of a range without writing it.
func (t *translator) classAtomValue() (rune, bool, error) {
	r, isChar, _, err := t.classItem()
	return r, isChar, err
}

// classItem reads one class element.
func (t *translator) classItem() (rune, bool, set, error) {
	if t.p[t.i] == '\\' {
		e, err := t.parseEscape(true)
		if err != nil {
			return 0, false, set{}, err
		}
		if e.kind == escSet {
			return 0, false, e.set, nil
		}
		return e.r, true, set{}, nil
	}
	r, size := utf8.DecodeRuneInString(t.p[t.i:])
	t.i += size
	return r, true, set{}, nil
}

// posix reads [:name:] or [:^name:] at t.i; it reports false when the
// text is not a POSIX class (then '[' is a literal).
func (t *translator) posix() (bool, error) {
	kind := t.p[t.i+1]
	end := indexFrom(t.p, string(kind)+"]", t.i+2)
	if end < 0 {
		return false, nil
	}
	if kind != ':' {
		return true, t.errorf("POSIX collating elements are not supported")
	}
	name := t.p[t.i+2 : end]
	negate := false
	if len(name) > 0 && name[0] == '^' {
		negate, name = true, name[1:]
	}
	rs, ok := posixClasses[name]
	if !ok {
		return true, t.errorf("unknown POSIX class name")
	}
	t.i = end + 2
	return true, t.writeSet(set{ranges: rs, negate: negate}, true)
}
