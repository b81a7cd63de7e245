package update

import (
	"strings"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// maxArrayIndex bounds the indexes arrayIndex accepts, so path parts never
// overflow int and padding limits apply before any allocation.
const maxArrayIndex = 1 << 30

// arrayIndex parses a path part as an array index: decimal digits only.
// mongod's parser accepts leading zeros ("01" addresses element 1).
func arrayIndex(part string) (int, bool) {
	if part == "" || len(part) > 10 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(part); i++ {
		c := part[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > maxArrayIndex {
		return 0, false
	}
	return n, true
}

// isPositional reports whether part is the positional operator "$".
func isPositional(part string) bool { return part == "$" }

// isArrayFilter reports whether part has the form $[...] (all-positional
// "$[]" or filtered "$[<identifier>]").
func isArrayFilter(part string) bool {
	return len(part) >= 3 && part[0] == '$' && part[1] == '[' && part[len(part)-1] == ']'
}

// splitPath splits a dotted update path into its parts.
func splitPath(path string) []string { return strings.Split(path, ".") }

// checkUpdatable returns mongod's error for an update path with an empty
// part (EmptyFieldName).
func checkUpdatable(path string) error {
	if path == "" {
		return mongoerr.New(mongoerr.EmptyFieldName, "An empty update path is not valid.")
	}
	for _, p := range splitPath(path) {
		if p == "" {
			return mongoerr.Newf(mongoerr.EmptyFieldName,
				"The update path '%s' contains an empty field name, which is not allowed.", path)
		}
	}
	return nil
}

// lessField orders the children of an update node as mongod 5.0+ applies
// them: numeric names (without leading zeros) by value, everything else as
// strings.
func lessField(a, b string) bool {
	if a == "" || b == "" || !isDigit(a[0]) || !isDigit(b[0]) ||
		(a[0] == '0' && len(a) > 1) || (b[0] == '0' && len(b) > 1) {
		return a < b
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// joinPath joins path parts with dots.
func joinPath(parts []string) string { return strings.Join(parts, ".") }

// hasPrefixPath reports whether prefix is a prefix (or all) of path, by
// whole parts.
func hasPrefixPath(path, prefix []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}
