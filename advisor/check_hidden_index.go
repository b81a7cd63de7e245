package advisor

import "fmt"

func init() {
	register(Check{ID: "hidden-index", Pattern: "index",
		Doc: "Hidden indexes: the planner ignores them but every write still maintains them; finish the trial by unhiding or dropping.",
		Run: checkHiddenIndex})
}

// checkHiddenIndex reports every hidden index.
func checkHiddenIndex(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		for _, ix := range c.Indexes {
			if !ix.Hidden {
				continue
			}
			out = append(out, Finding{Severity: Info, Namespace: c.NS(), Subject: ix.Name,
				Message: fmt.Sprintf("index %s %s is hidden: written on every insert and update, read by no query", ix.Name, ix.KeyString()),
				Evidence: Evidence{Method: "listIndexes hidden option; $collStats indexSizes", Figures: []Figure{
					fig("index size", float64(ix.Size), "bytes"), count("accesses.ops", ix.Ops), count("documents", c.Count)}},
				Fix: Fix{Summary: "If nothing slowed down since it was hidden, drop it; otherwise unhide it.",
					Commands: []string{
						fmt.Sprintf("%s.dropIndex(%q)", collRef(c.Name), ix.Name),
						fmt.Sprintf("%s.unhideIndex(%q)  // if queries needed it", collRef(c.Name), ix.Name)}}})
		}
	}
	return out
}
