package advisor

import "fmt"

func init() {
	register(Check{ID: "redundant-index", Pattern: "index",
		Doc: "Indexes whose key pattern is a prefix of another index's: the longer one serves every query the shorter one does.",
		Run: checkRedundantIndex})
}

// plainIndex reports whether an index is an ordinary ascending or
// descending B-tree with no options that change what it holds.
func plainIndex(ix *Index) bool {
	if ix.Partial != "" || ix.Sparse || ix.Collation || ix.Hidden {
		return false
	}
	for _, k := range ix.Keys {
		if _, ok := k.Dir.(string); ok {
			return false
		}
	}
	return true
}

// isPrefix reports whether a is a strict prefix of b, key by key with the
// same directions.
func isPrefix(a, b []Key) bool {
	if len(a) >= len(b) {
		return false
	}
	return sameKeys(a, b[:len(a)])
}

// checkRedundantIndex reports prefix-redundant indexes.
func checkRedundantIndex(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		for _, a := range c.Indexes {
			if a.Name == "_id_" || a.Unique || a.TTL || !plainIndex(a) {
				continue
			}
			for _, b := range c.Indexes {
				if b == a || !plainIndex(b) || !isPrefix(a.Keys, b.Keys) {
					continue
				}
				out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: a.Name,
					Message: fmt.Sprintf("index %s %s is a prefix of %s %s, which serves the same queries", a.Name, a.KeyString(), b.Name, b.KeyString()),
					Evidence: Evidence{Method: "listIndexes key patterns compared; $indexStats accesses.ops; $collStats indexSizes", Figures: []Figure{
						count("keys in the redundant index", int64(len(a.Keys))), count("keys in the covering index", int64(len(b.Keys))),
						fig("redundant index size", float64(a.Size), "bytes"), count("redundant index accesses.ops", a.Ops)}},
					Fix: Fix{Summary: fmt.Sprintf("Drop %s: queries on its keys use %s. Hide it first to check.", a.Name, b.Name),
						Commands: []string{
							fmt.Sprintf("%s.hideIndex(%q)", collRef(c.Name), a.Name),
							fmt.Sprintf("%s.dropIndex(%q)", collRef(c.Name), a.Name)}}})
				break
			}
		}
	}
	return out
}
