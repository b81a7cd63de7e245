package advisor

import "fmt"

func init() {
	register(Check{ID: "attribute-numeric-strings", Pattern: "attribute",
		Doc: "Attribute values that are numbers stored as strings in a {k, v} array's v: range queries ($gte: 400) never match the string \"500\".",
		Run: checkAttributeNumericStrings})
}

// checkAttributeNumericStrings reports k/v keys whose values are mostly
// strings that convert to numbers.
func checkAttributeNumericStrings(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil {
			continue
		}
		for _, k := range s.KV {
			sh := share(k.NumericStrings, k.Values)
			if k.NumericStrings == 0 || sh < e.t.NumericStringShare {
				continue
			}
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: k.Path + "." + k.Key,
				Message: fmt.Sprintf("attribute %q of %s holds numbers as strings in %.0f%% of its values: comparisons with numbers skip them", k.Key, k.Path, 100*sh),
				Evidence: Evidence{Method: sampleMethod(c, "values per k, strings that $convert to double without error"), Figures: []Figure{
					count("values", k.Values), count("string values", k.Strings), count("numeric strings", k.NumericStrings),
					fig("share", round2(sh), "share")}},
				Fix: Fix{Summary: "Store the numbers as numbers: convert the existing values once, and normalise on write.",
					Commands: []string{fmt.Sprintf("%s.updateMany({%q: %q}, [{$set: {%s: {$map: {input: \"$%s\", in: {$cond: [{$eq: [\"$$this.k\", %q]}, {$mergeObjects: [\"$$this\", {v: {$convert: {input: \"$$this.v\", to: \"double\", onError: \"$$this.v\"}}}]}, \"$$this\"]}}}}}])",
						collRef(c.Name), k.Path+".k", k.Key, quoteField(k.Path), k.Path, k.Key)},
					Code: fmt.Sprintf("attribute.New[Doc](db.Collection(%q), attribute.Config{Field: %q, Kinds: map[string]attribute.Kind{%q: attribute.Number}, NumericStrings: attribute.Normalize})", c.Name, k.Path, k.Key)}})
		}
	}
	return out
}
