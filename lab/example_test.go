package lab_test

import (
	"context"
	"fmt"
	"log"

	"github.com/formworkdb/formwork/lab"
)

// ExampleRun measures the subset pattern on a small data set, on an
// in-memory engine, and prints its verdict.
func ExampleRun() {
	rep, err := lab.Run(context.Background(), lab.Options{Patterns: []string{"subset"}, Scale: 5, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range rep.Patterns {
		fmt.Println(p.Pattern, "buys:", p.Verdict.Buy)
		fmt.Println(p.Pattern, "charges:", p.Verdict.Charge)
	}
	// Output:
	// subset buys: product page: documents examined 6 → 1 docs (6.0× fewer)
	// subset charges: delete a review (refill): round trips 1 → 5.6 (5.6× more)
}
