package advisor_test

import (
	"fmt"

	"github.com/formworkdb/formwork/advisor"
)

// ExampleAnalyse runs the checks on a Snapshot without a server: a
// collection whose comments arrays hold 500 elements in most documents.
func ExampleAnalyse() {
	snap := &advisor.Snapshot{Sample: 1000, Databases: []*advisor.Database{{Name: "blog", Collections: []*advisor.Collection{{
		DB: "blog", Name: "posts", Count: 1000,
		Schema: &advisor.Schema{Sampled: 1000, SizeP99: 30000, Fields: []*advisor.Field{{
			Path: "comments", Docs: 1000, Types: map[string]int64{"array": 1000},
			Array: &advisor.ArrayStats{Count: 1000, P50: 480, P95: 500, Max: 510},
		}}},
	}}}}}
	rep, err := advisor.Analyse(snap, advisor.Options{Checks: []string{"unbounded-array"}})
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Findings {
		fmt.Println(f.ID, f.Severity, f.Namespace, f.Subject)
		for _, g := range f.Evidence.Figures[1:3] {
			fmt.Println(" ", g)
		}
		fmt.Println(" ", f.Fix.Lab)
	}
	// Output:
	// unbounded-array warning blog.posts comments
	//   median length 480
	//   p95 length 500
	//   formwork lab subset
}
