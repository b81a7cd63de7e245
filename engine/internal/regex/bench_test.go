package regex

import (
	"strings"
	"testing"
)

// BenchmarkMatch measures one match of typical filters on a 64-byte
// subject.
func BenchmarkMatch(b *testing.B) {
	subject := strings.Repeat("lorem ipsum ", 5) + "café"
	for _, c := range []struct{ name, pattern, options string }{
		{"prefix", `^lorem`, ""},
		{"contains", `ipsum`, ""},
		{"caseless", `CAFÉ`, "i"},
		{"backref", `(\w+) ipsum \1`, ""},
		{"lookahead", `lorem(?= ipsum)`, ""},
	} {
		re, err := Compile("", c.pattern, c.options)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("pattern="+c.name, func(b *testing.B) {
			for b.Loop() {
				if ok, err := re.MatchString(subject); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
