package regex

import (
	"testing"
	"time"
)

// FuzzCompile checks that any pattern either compiles or returns an error,
// and that a compiled one matches within its time limit.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{`(a)\1`, `a++`, `(?<=a)b`, `[[:alpha:]\d-]`, `\Qa\E`, `(?x) a # c`, `(?(1)a|b)`, `\p{^L}`, `[\P{L}]`, `\g{-1}`, `(?i:a)`, `x{2,}+`, `\N{U+41}`} {
		f.Add(s, "imsx", "subject aa\nbb")
	}
	f.Fuzz(func(t *testing.T, pattern, options, subject string) {
		re, err := Compile("", pattern, options)
		if err != nil {
			return
		}
		re = re.WithTimeout(20 * time.Millisecond)
		if _, err := re.MatchString(subject); err != nil && err != ErrTimeout {
			t.Fatalf("match error %v", err)
		}
		ms, _ := re.FindAll(subject, 0)
		for _, m := range ms {
			if m.Start < 0 || m.End > len(subject) || m.Start > m.End || subject[m.Start:m.End] != m.Text {
				t.Fatalf("bad offsets %+v", m)
			}
		}
	})
}
