package regex

import (
	"strings"
	"sync"
	"unicode"
)

// propertyNames maps a loosely written property name (lower case, without
// '_', '-' or ' ') to the name the engine knows: PCRE2 matches property
// names that way since 10.40.
var propertyNames = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, tables := range []map[string]*unicode.RangeTable{unicode.Categories, unicode.Scripts, unicode.Properties} {
		for name := range tables {
			m[looseName(name)] = name
		}
	}
	return m
})

// looseName normalises a property name for loose matching.
func looseName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// canonicalProperty returns the engine's spelling of a property name, or
// false when there is no such property.
func canonicalProperty(name string) (string, bool) {
	n, ok := propertyNames()[looseName(name)]
	return n, ok
}
