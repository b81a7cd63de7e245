package regex

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// TestRegexMatch checks PCRE semantics the engine's own dialect reads
// differently, and constructs RE2 lacks.
func TestRegexMatch(t *testing.T) {
	cases := []struct {
		pattern, options, subject string
		want                      bool
	}{
		{`(a)\1`, "", "xaa", true},
		{`(a)\1`, "", "ab", false},
		{`(?<x>b)\k<x>`, "", "abb", true},
		{`(?P<x>b)(?P=x)`, "", "abb", true},
		{`(b)\g{-1}`, "", "abb", true},
		{`(b)\g1`, "", "abb", true},
		{`a(?=p)`, "", "ap", true},
		{`a(?=p)`, "", "aq", false},
		{`a(?!p)`, "", "ap", false},
		{`(?<=a)p`, "", "ap", true},
		{`(?<!a)p`, "", "ap", false},
		{`^a++b`, "", "aab", true},
		{`^a++a`, "", "aaa", false},
		{`^(?>a+)a`, "", "aaa", false},
		{`^(?:ab)*+c`, "", "ababc", true},
		{`^[ab]{2}+b`, "", "abb", true},
		{`\p{L}+`, "", "é", true},
		{`^\p{Lu}$`, "", "É", true},
		{`^\p{Greek}+$`, "", "αβγ", true},
		{`^\pL$`, "", "x", true},
		{`^\p{greek}$`, "", "α", true},
		{`^\p{lu}$`, "", "A", true},
		{`^\p{Any}\p{Any}$`, "", "a😀", true},
		{`^[\p{Any}]$`, "", "\n", true},
		{`^[^\p{L}]$`, "", "1", true},
		{`^[\P{L}x]+$`, "", "1x2", true},
		{`^\P{L}$`, "", "1", true},
		{`^\d$`, "", "٣", false}, // ASCII digits only
		{`^\w$`, "", "é", false},
		{`^\s$`, "", "\v", true},
		{`^\s$`, "", "\u00a0", false},
		{`^\h$`, "", "\u00a0", true},
		{`\bcafé\b`, "", "café au", false}, // é is not a word character
		{`\bcaf`, "", "café", true},
		{`pie$`, "", "apple pie\n", true},
		{`pie$`, "", "pie\nx", false},
		{`pie$`, "m", "pie\nx", true},
		{`^x`, "m", "a\nx", true},
		{`^$`, "m", "a\n", false},
		{`^$`, "", "", true},
		{`a.c`, "", "a\nc", false},
		{`a.c`, "s", "a\nc", true},
		{`ABC`, "i", "abc", true},
		{`ÉTÉ`, "i", "été", true},
		{`a b c # comment`, "x", "abc", true},
		{`a\ b`, "x", "a b", true},
		{`[ ]`, "x", " ", true},
		{`(?x) a b`, "", "ab", true},
		{`(?i)abc`, "", "ABC", true},
		{`a(?i:b)c`, "", "aBc", true},
		{`a(?i:b)c`, "", "aBC", false},
		{`[[:upper:]]`, "", "xY", true},
		{`[[:^digit:]]`, "", "123", false},
		{`[^[:digit:]]`, "", "12a", true},
		{`[\d-]`, "", "-", true},
		{`[a\-z]`, "", "b", false},
		{`[]a]`, "", "]", true},
		{`[^]a]`, "", "]", false},
		{`\Qa.b\E`, "", "a.b", true},
		{`\Qa.b\E`, "", "axb", false},
		{`[\Q]\E]`, "", "]", true},
		{`\x41\x{263A}`, "", "A☺", true},
		{`\101`, "", "A", true},
		{`\o{101}`, "", "A", true},
		{`\cA`, "", "\x01", true},
		{`a{2,3}`, "", "aa", true},
		{`a{,3}`, "", "a{,3}", true},
		{`x{`, "", "x{", true},
		{`(?(1)a|b)`, "", "b", false}, // group 1 does not exist: invalid below
		{`(a)?(?(1)b|c)`, "", "ab", true},
		{`(a)?(?(1)b|c)`, "", "c", true},
		{`(?(?=a)ab|cd)`, "", "cd", true},
		{`(?#comment)a`, "", "a", true},
		{`a\Rb`, "", "a\r\nb", true},
		{`(*FAIL)|a`, "", "a", true},
		{`\N`, "", "\n", false},
		{`😀+`, "", "😀😀", true},
		{`[😀-😂]`, "", "😁", true},
		{`\Z`, "", "a\n", true},
		{`a\z`, "", "a\n", false},
		{`(?n)(a)`, "", "a", true},
		{`(?^)a`, "i", "a", true},
	}
	for _, c := range cases {
		re, err := Compile("", c.pattern, c.options)
		if c.pattern == `(?(1)a|b)` {
			if err == nil {
				t.Errorf("Compile(%q) accepted a condition on a missing group", c.pattern)
			}
			continue
		}
		if err != nil {
			t.Errorf("Compile(%q, %q): %v", c.pattern, c.options, err)
			continue
		}
		got, err := re.MatchString(c.subject)
		if err != nil || got != c.want {
			t.Errorf("/%s/%s on %q = %v, %v; want %v (engine form %q)", c.pattern, c.options, c.subject, got, err, c.want, re.expr)
		}
	}
}

// TestRegexCompileErrors checks mongod's codes for rejected patterns.
func TestRegexCompileErrors(t *testing.T) {
	cases := []struct {
		pattern, options string
		code             mongoerr.Code
	}{
		{"(", "", CodeInvalid},
		{")", "", CodeInvalid},
		{"[a", "", CodeInvalid},
		{"*a", "", CodeInvalid},
		{`a{3,2}`, "", CodeInvalid},
		{`a{70000}`, "", CodeInvalid},
		{`\1`, "", CodeInvalid},
		{`\k<nope>`, "", CodeInvalid},
		{`(?<n>a)(?<n>b)`, "", CodeInvalid},
		{`[z-a]`, "", CodeInvalid},
		{`\i`, "", CodeInvalid},
		{`\u0041`, "", CodeInvalid},
		{`(?R)`, "", CodeInvalid},
		{`\p{NotAScript}`, "", CodeInvalid},
		{`[[:nope:]]`, "", CodeInvalid},
		{`(?z)`, "", CodeInvalid},
		{"a", "g", CodeBadFlag},
		{"a", "imsxuq", CodeBadFlag},
		{"a\x00", "", mongoerr.BadValue},
		{"a", "i\x00", mongoerr.BadValue},
		{strings.Repeat("a", MaxPatternSize+1), "", mongoerr.BadValue},
	}
	for _, c := range cases {
		_, err := Compile("", c.pattern, c.options)
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != c.code {
			t.Errorf("Compile(%q, %q) = %v; want code %d", c.pattern, c.options, err, c.code)
		}
	}
	// The message names the user's problem, not the translated pattern.
	_, err := Compile("", `(a)(?(1)a|b|c)`, "")
	if err == nil || strings.Contains(err.Error(), "?<1>") || strings.Contains(err.Error(), "in `") {
		t.Errorf("engine error leaks the translated pattern: %v", err)
	}
	if _, err := Compile("", strings.Repeat("a", MaxPatternSize), ""); err != nil {
		t.Errorf("a pattern of MaxPatternSize bytes: %v", err)
	}
	_, err = Compile("$regexMatch", "a", "g")
	var me *mongoerr.Error
	if !errors.As(err, &me) || me.Msg != "$regexMatch invalid flag in regex options: g" {
		t.Errorf("flag error message = %v", err)
	}
}

// TestRegexFind checks offsets and captures.
func TestRegexFind(t *testing.T) {
	re, err := Compile("", `(é)(x)?(b+)`, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := re.Find("aébb", 0)
	if err != nil || m == nil {
		t.Fatalf("Find: %v, %v", m, err)
	}
	if m.Start != 1 || m.End != 5 || m.CodePoint != 1 || m.Text != "ébb" {
		t.Errorf("match = %+v", m.Capture)
	}
	if len(m.Captures) != 3 || m.Captures[0].Text != "é" || m.Captures[1].Matched || m.Captures[2].Text != "bb" || m.Captures[2].CodePoint != 2 {
		t.Errorf("captures = %+v", m.Captures)
	}
	// Named and unnamed groups are numbered left to right, as in PCRE.
	re, _ = Compile("", `(?<first>a)(b)`, "")
	m, _ = re.Find("ab", 0)
	if m.Captures[0].Text != "a" || m.Captures[1].Text != "b" {
		t.Errorf("named group order: %+v", m.Captures)
	}
	re, _ = Compile("", `a*`, "")
	all, err := re.FindAll("baac", 0)
	if err != nil || len(all) != 4 {
		t.Fatalf("FindAll = %+v, %v", all, err)
	}
	if all[1].Text != "aa" || all[1].CodePoint != 1 {
		t.Errorf("FindAll[1] = %+v", all[1])
	}
	all, _ = re.FindAll("baac", 2)
	if len(all) != 2 {
		t.Errorf("FindAll limit: %d matches", len(all))
	}
	m, _ = re.Find("baac", 2)
	if m == nil || m.Start != 2 || m.Text != "a" {
		t.Errorf("Find from 2 = %+v", m)
	}
	// Invalid UTF-8 counts one code point per byte.
	re, _ = Compile("", `b`, "")
	m, _ = re.Find("\xffb", 0)
	if m == nil || m.Start != 1 || m.CodePoint != 1 {
		t.Errorf("invalid UTF-8 offsets: %+v", m)
	}
}

// TestRegexTimeout checks that catastrophic backtracking stops with
// ErrTimeout instead of hanging.
func TestRegexTimeout(t *testing.T) {
	re, err := Compile("", `^(a+)+$`, "")
	if err != nil {
		t.Fatal(err)
	}
	re = re.WithTimeout(50 * time.Millisecond)
	start := time.Now()
	_, err = re.MatchString(strings.Repeat("a", 40) + "!")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %v", d)
	}
	var me *mongoerr.Error
	if !errors.As(ExecError("$regexMatch", err), &me) || me.Code != CodeExec {
		t.Errorf("ExecError code: %v", me)
	}
}
