// Package regex runs MongoDB's regular expressions: PCRE syntax with the
// option letters i, m, s, x and u, on a backtracking engine
// (github.com/dlclark/regexp2) so that backreferences, lookaround, atomic
// groups and possessive quantifiers work as they do in mongod.
//
// A pattern is first translated from PCRE into the engine's (.NET) syntax by
// translate.go, which also gives PCRE's meaning to what the two dialects
// read differently: \d \w \s \b are ASCII (mongod compiles with UTF but not
// UCP), \h \v \R \Q…\E \x{…} \o{…} and POSIX classes exist, every capture
// group is numbered left to right whether named or not, and ^ under the m
// option does not match after a newline that ends the subject.
//
// Invariants:
//
//	I1. Compile returns MongoDB's errors: BadValue for a pattern longer than
//	    MaxPatternSize or one holding a NUL byte, 51108 for an unknown option
//	    letter, 51091 for a pattern PCRE does not compile (or that Formwork
//	    cannot run: recursion, branch reset, \K, (*VERB)s other than (*FAIL)).
//	I2. Every match runs under a time limit (Regexp.Timeout, DefaultTimeout
//	    unless changed); past it the match stops with ErrTimeout. Nothing
//	    here loops without bound: FindAll stops after its limit.
//	I3. Offsets are reported both in bytes of the UTF-8 subject and in code
//	    points, counting each invalid UTF-8 byte as one code point.
//	I4. A compiled Regexp is immutable and safe for concurrent use.
//
// The package imports only mongoerr.
package regex
