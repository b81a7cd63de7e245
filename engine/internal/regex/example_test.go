package regex_test

import (
	"fmt"

	"github.com/formworkdb/formwork/engine/internal/regex"
)

func ExampleCompile() {
	re, err := regex.Compile("$regexMatch", `(\w)\1`, "i")
	if err != nil {
		panic(err)
	}
	ok, err := re.MatchString("bOok")
	fmt.Println(ok, err)
	_, err = regex.Compile("$regexMatch", `a`, "g")
	fmt.Println(err)
	// Output:
	// true <nil>
	// Location51108 (51108): $regexMatch invalid flag in regex options: g
}

// \w is ASCII, as in mongod, so "été" holds two matches.
func ExampleRegexp_FindAll() {
	re, _ := regex.Compile("", `(?<word>é\w*)|(\d+)`, "")
	ms, _ := re.FindAll("café 42 été", 10)
	for _, m := range ms {
		fmt.Printf("%q bytes %d-%d code point %d captures %v/%v\n", m.Text, m.Start, m.End, m.CodePoint, m.Captures[0].Matched, m.Captures[1].Matched)
	}
	// Output:
	// "é" bytes 3-5 code point 3 captures true/false
	// "42" bytes 6-8 code point 5 captures false/true
	// "ét" bytes 9-12 code point 8 captures true/false
	// "é" bytes 12-14 code point 10 captures true/false
}
