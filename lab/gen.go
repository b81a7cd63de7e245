package lab

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
)

// gen is the seeded generator of a scenario's data: the same seed and
// stream give the same data, whatever other scenarios run. It is not safe
// for concurrent use.
type gen struct {
	r *rand.Rand
}

// newGen returns the generator of one stream (a scenario's name) under
// seed.
func newGen(seed int64, stream string) *gen {
	h := fnv.New64a()
	h.Write([]byte(stream))
	return &gen{r: rand.New(rand.NewPCG(uint64(seed), h.Sum64()))}
}

// intn returns a uniform int in [0, n).
func (g *gen) intn(n int) int { return g.r.IntN(n) }

// float returns a uniform float64 in [0, 1).
func (g *gen) float() float64 { return g.r.Float64() }

// zipf returns a sampler of [0, n) where the item of rank k is drawn with
// probability proportional to 1/(k+1)^s, popular items spread over the
// range by a random permutation (item 0 is not always the most popular).
// n must be positive and s above 1.
func (g *gen) zipf(n int, s float64) func() int {
	perm := g.r.Perm(n)
	if n == 1 {
		return func() int { return 0 }
	}
	z := rand.NewZipf(g.r, s, 1, uint64(n-1))
	return func() int { return perm[z.Uint64()] }
}

// zipfRank is zipf without the permutation: item k is the k-th most
// popular, for data already ordered by popularity.
func (g *gen) zipfRank(n int, s float64) func() int {
	if n == 1 {
		return func() int { return 0 }
	}
	z := rand.NewZipf(g.r, s, 1, uint64(n-1))
	return func() int { return int(z.Uint64()) }
}

// heavy returns a Pareto-distributed length: at least lo, with tail
// exponent alpha (smaller is heavier; 1.1 to 1.5 is typical of reviews
// per product or buyers per book), capped at hi.
func (g *gen) heavy(lo int, alpha float64, hi int) int {
	u := 1 - g.r.Float64() // (0, 1]
	x := float64(lo) * math.Pow(u, -1/alpha)
	if x > float64(hi) {
		return hi
	}
	return int(x)
}

// words returns n pseudo-words, the text of a review or a title.
func (g *gen) words(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[g.r.IntN(len(vocabulary))])
	}
	return b.String()
}

// name returns a person's name.
func (g *gen) name() string {
	return firstNames[g.r.IntN(len(firstNames))] + " " + lastNames[g.r.IntN(len(lastNames))]
}

// pick returns one of xs.
func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

var vocabulary = strings.Fields(`good great solid cheap sturdy light heavy broke after weeks
works as described fast shipping would buy again returned it colour matches photo battery
lasts long the handle feels flimsy but price is fair my kids love it instructions unclear
quality excellent packaging damaged customer service helpful size runs small perfect gift`)

var firstNames = strings.Fields(`Ada Grace Alan Edsger Barbara Donald Margaret Ken Radia Niklaus
Frances John Hedy Dennis Sophie Tim Katherine Linus Shafi Leslie`)

var lastNames = strings.Fields(`Lovelace Hopper Turing Dijkstra Liskov Knuth Hamilton Thompson
Perlman Wirth Allen Backus Lamarr Ritchie Wilson Berners-Lee Johnson Torvalds Goldwasser Lamport`)
