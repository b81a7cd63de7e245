package collation

import (
	"bytes"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// Collator compares strings under one collation spec. A nil *Collator is
// never handed out by this package; callers use nil for the simple
// collation. It is safe for concurrent use (I3).
type Collator struct {
	spec Spec
	doc  bson.Raw
	tag  language.Tag
	// baseTag has strength at most 2; it gives the prefix after which
	// the case level goes (caseLevel only).
	baseTag language.Tag
	// swapCase feeds the case-swapped string to the tertiary level, so
	// that upper case sorts first (caseFirst "upper").
	swapCase bool
	// spaceShifted emulates maxVariable "space" with alternate
	// "shifted": whitespace is ignorable below the quaternary level.
	spaceShifted bool
	pool         sync.Pool
}

// state is one goroutine's x/text collators and buffers (x/text's
// Collator is not safe for concurrent use).
type state struct {
	main, base *collate.Collator
	buf        collate.Buffer
	a, b       []byte
}

// New builds a collator for a parsed spec.
//
// Divergence: x/text/collate (CLDR root and tailorings of its own CLDR
// version) stands in for ICU 57.1; it has no caseFirst, maxVariable or
// normalization settings, so New emulates them: caseFirst "upper" orders
// the tertiary level on the case-swapped string, "lower" orders as "off"
// (lower case first already); maxVariable "space" with alternate
// "shifted" drops white space below the quaternary level (x/text's own
// shifted handling, used for "punct", makes punctuation and spaces
// ignorable); caseLevel inserts one weight per letter between the
// secondary and tertiary levels; strength 5 appends the NFD code points;
// text is always normalised (normalization: false is echoed, not
// obeyed). Equal-under-collation results match ICU for the common cases
// (TestCompareStrengths); orders of rare tertiary and punctuation cases
// may differ.
func New(s Spec) *Collator {
	c := &Collator{spec: s, doc: s.Document()}
	lang, variant := icuToBCP47(s.Locale)
	ext := []string{}
	if variant != "" {
		ext = append(ext, "co-"+variant)
	}
	c.spaceShifted = s.Alternate == "shifted" && s.MaxVariable == "space"
	if s.Alternate == "shifted" && !c.spaceShifted {
		ext = append(ext, "ka-shifted")
	}
	if s.Backwards {
		ext = append(ext, "kb-true")
	}
	if s.NumericOrdering {
		ext = append(ext, "kn-true")
	}
	levels := [...]string{1: "level1", 2: "level2", 3: "level3", 4: "level4", 5: "level4"}
	sep := "-u-"
	if strings.Contains(lang, "-u-") {
		sep = "-"
	}
	c.tag = language.Make(lang + sep + strings.Join(append(ext, "ks-"+levels[s.Strength]), "-"))
	c.baseTag = language.Make(lang + sep + strings.Join(append(ext, "ks-"+levels[min(s.Strength, 2)]), "-"))
	c.swapCase = s.CaseFirst == "upper"
	return c
}

// icuToBCP47 turns an ICU locale ID (en_US, de@collation=phonebook) into
// a BCP 47 language tag and a collation type for x/text.
func icuToBCP47(id string) (string, string) {
	variant := ""
	if i := strings.Index(id, "@collation="); i >= 0 {
		variant = id[i+len("@collation="):]
		id = id[:i]
	}
	switch variant {
	case "phonebook":
		variant = "phonebk"
	case "traditional":
		variant = "trad"
	case "gb2312han":
		variant = "gb2312"
	}
	if id == "en_US_POSIX" {
		return "en-US-u-va-posix", variant
	}
	return strings.ReplaceAll(id, "_", "-"), variant
}

// Spec returns the normalised spec.
func (c *Collator) Spec() Spec { return c.spec }

// Document returns the normalised spec as mongod echoes it. The caller
// must not modify it.
func (c *Collator) Document() bson.Raw { return c.doc }

// Equal reports whether c and o are the same collation; nil is the simple
// collation (I2).
func Equal(c, o *Collator) bool {
	if c == nil || o == nil {
		return c == o
	}
	return c == o || bytes.Equal(c.doc, o.doc)
}

func (c *Collator) get() *state {
	if st, ok := c.pool.Get().(*state); ok {
		return st
	}
	st := &state{main: collate.New(c.tag)}
	if c.spec.CaseLevel {
		st.base = collate.New(c.baseTag)
	}
	return st
}

// Compare orders a and b under the collation, returning -1, 0 or 1; it
// agrees with the order of their keys (I1).
func (c *Collator) Compare(a, b string) int {
	if a == b {
		return 0
	}
	st := c.get()
	st.a = c.appendKey(st, st.a[:0], a)
	st.b = c.appendKey(st, st.b[:0], b)
	r := bytes.Compare(st.a, st.b)
	c.pool.Put(st)
	return r
}

// AppendKey appends the sort key of s to dst: byte strings whose order is
// the collation's order, equal exactly when the strings compare equal.
func (c *Collator) AppendKey(dst []byte, s string) []byte {
	st := c.get()
	dst = c.appendKey(st, dst, s)
	c.pool.Put(st)
	return dst
}

// Key returns the sort key of s.
func (c *Collator) Key(s string) []byte { return c.AppendKey(nil, s) }

func (c *Collator) appendKey(st *state, dst []byte, s string) []byte {
	in := s
	if c.spaceShifted {
		in = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, in)
	}
	tin := in
	if c.swapCase {
		tin = swapCase(in)
	}
	st.buf.Reset()
	main := st.main.KeyFromString(&st.buf, tin)
	if c.spec.CaseLevel {
		base := st.base.KeyFromString(&st.buf, in)
		dst = append(dst, base...)
		dst = append(dst, 0, 0)
		dst = c.appendCaseLevel(dst, in)
		if len(main) > len(base) {
			dst = append(dst, main[len(base):]...)
		}
	} else {
		dst = append(dst, main...)
	}
	if c.spaceShifted && c.spec.Strength >= 4 {
		dst = append(dst, 0, 0)
		for _, r := range s {
			if unicode.IsSpace(r) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0xFF)
			}
		}
	}
	if c.spec.Strength == 5 {
		dst = append(dst, 0, 0)
		for _, b := range []byte(norm.NFD.String(s)) {
			switch b {
			case 0:
				dst = append(dst, 1, 1)
			case 1:
				dst = append(dst, 1, 2)
			default:
				dst = append(dst, b)
			}
		}
	}
	return dst
}

// appendCaseLevel appends one weight per cased letter: lower case (and
// uncased letters) before upper case, or the reverse for caseFirst upper.
func (c *Collator) appendCaseLevel(dst []byte, s string) []byte {
	lo, up := byte(1), byte(2)
	if c.spec.CaseFirst == "upper" {
		lo, up = 2, 1
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			dst = append(dst, up)
		} else {
			dst = append(dst, lo)
		}
	}
	return dst
}

// swapCase maps upper case letters to lower case and lower to upper.
func swapCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteRune(r)
		case unicode.IsUpper(r):
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLower(r):
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
