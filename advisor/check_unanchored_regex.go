package advisor

import (
	"fmt"
	"regexp"
	"strings"
)

func init() {
	register(Check{ID: "unanchored-path-regex", Pattern: "tree",
		Doc: "Queries with a $regex that is not anchored (^prefix) or is case-insensitive, examining Thresholds.ScanKeys (1000) or more keys and documents per execution: no index range applies.",
		Run: checkUnanchoredRegex})
}

// anchored reports whether a regex can bound an index scan: it starts
// with ^ (or \A), has a literal prefix, and is case-sensitive.
func anchored(pattern, options string) bool {
	if strings.Contains(options, "i") {
		return false
	}
	p := strings.TrimPrefix(strings.TrimPrefix(pattern, "^"), `\A`)
	if p == pattern {
		return false
	}
	return p != "" && regexp.QuoteMeta(p[:1]) == p[:1]
}

// checkUnanchoredRegex reports regex shapes that scan.
func checkUnanchoredRegex(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Filter == nil || sh.Count == 0 {
			continue
		}
		per := float64(sh.KeysExamined+sh.DocsExamined) / float64(sh.Count)
		if per < float64(e.t.ScanKeys) {
			continue
		}
		ff := splitFilter(sh.Filter)
		for field, res := range ff.Regexes {
			for _, re := range res {
				if anchored(re.Pattern, re.Options) {
					continue
				}
				fix := Fix{}
				pattern := "tree"
				if strings.Contains(re.Options, "i") {
					pattern = "collation"
					fix = Fix{Summary: "For case-insensitive matching use an index with a case-insensitive collation and query with the same collation; for prefixes, anchor the regex.",
						Commands: []string{
							fmt.Sprintf("%s.createIndex({%s: 1}, {collation: {locale: \"en\", strength: 2}})", collRef(sh.Collection), quoteField(field)),
							fmt.Sprintf("%s.find({%s: <value>}).collation({locale: \"en\", strength: 2})", collRef(sh.Collection), quoteField(field))}}
				} else {
					fix = Fix{Summary: "Store the path from the root (materialized path, \",a,b,\") and query descendants with an anchored prefix: one index range instead of a full scan.",
						Commands: []string{
							createIndex(sh.Collection, []Key{{Field: field, Dir: 1}}),
							fmt.Sprintf("%s.find({%s: /^,root,child,/})  // anchored: the index bounds the scan", collRef(sh.Collection), quoteField(field))}}
				}
				figs := append(shapeFigures(sh), fig("keys and documents examined per document returned", round2(float64(sh.KeysExamined+sh.DocsExamined)/float64(max(sh.NReturned, 1))), ""))
				out = append(out, Finding{Severity: Warning, Namespace: sh.NS, Subject: fmt.Sprintf("%s: /%s/%s", field, re.Pattern, re.Options), Pattern: pattern,
					Message:  fmt.Sprintf("regex /%s/%s on %s cannot use an index range: %.0f keys and documents examined per execution", re.Pattern, re.Options, field, per),
					Evidence: Evidence{Method: shapeMethod(e, "keysExamined and docsExamined per operation"), Figures: figs},
					Fix:      fix})
			}
		}
	}
	return out
}
