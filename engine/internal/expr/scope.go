package expr

import (
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
)

// Slots of the variables every scope has.
const (
	SlotRoot    = 0 // $$ROOT: the document the pipeline stage is processing
	SlotCurrent = 1 // $$CURRENT: where "$a" paths start; ROOT unless rebound
)

// Scope names the variables visible to an expression and maps each to a
// slot of Ctx.Vars. A child scope ($let, $map, $filter, $reduce …) sees
// its parent's names and shares its slot numbering, so slots are unique
// across everything parsed under one root scope. Not safe for concurrent
// use while parsing; read-only afterwards.
type Scope struct {
	parent *Scope
	names  map[string]int
	next   *int // the root's slot counter
	// coll is the root's collation (nil: simple); see SetCollation.
	coll *collation.Collator
}

// SetCollation makes expressions parsed in s and its children, and
// contexts made from it, compare strings under c (nil: the simple
// collation). It must be called on a root scope before parsing.
func (s *Scope) SetCollation(c *collation.Collator) { s.coll = c }

// Collation returns the collation of s's root scope.
func (s *Scope) Collation() *collation.Collator {
	for s.parent != nil {
		s = s.parent
	}
	return s.coll
}

// NewScope returns a root scope with ROOT and CURRENT defined.
func NewScope() *Scope {
	n := 2
	return &Scope{names: map[string]int{"ROOT": SlotRoot, "CURRENT": SlotCurrent}, next: &n}
}

// Child returns a scope nested in s.
func (s *Scope) Child() *Scope {
	return &Scope{parent: s, names: map[string]int{}, next: s.next}
}

// Define adds a variable to s and returns its slot. Redefining a name in
// the same scope gives it a new slot. CURRENT keeps its slot so that "$a"
// paths follow a rebinding of $$CURRENT.
func (s *Scope) Define(name string) int {
	if name == "CURRENT" {
		s.names[name] = SlotCurrent
		return SlotCurrent
	}
	slot := *s.next
	*s.next++
	s.names[name] = slot
	return slot
}

// Slots is the number of slots handed out so far under s's root.
func (s *Scope) Slots() int { return *s.next }

// Lookup returns the slot of a visible variable.
func (s *Scope) Lookup(name string) (int, bool) { return s.lookup(name) }

func (s *Scope) lookup(name string) (int, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if slot, ok := sc.names[name]; ok {
			return slot, true
		}
	}
	return 0, false
}

// Ctx is the state of evaluation: the variables' values by slot, the
// command's NOW and CLUSTER_TIME, and a random source for $rand. One Ctx
// serves one goroutine; it is not safe for concurrent use.
type Ctx struct {
	Vars        []bson.RawValue
	Now         time.Time
	ClusterTime bson.Timestamp
	// Collation compares strings in $eq, $cmp, $in … (nil: simple).
	Collation *collation.Collator
	rand      *rand.Rand
}

// NewCtx returns a context with room for every slot of sc and NOW set to
// the current time.
func NewCtx(sc *Scope) *Ctx {
	n := 2
	if sc != nil {
		n = sc.Slots()
	}
	c := &Ctx{Vars: make([]bson.RawValue, n), Now: time.Now()}
	if sc != nil {
		c.Collation = sc.Collation()
	}
	return c
}

// SetRoot makes doc both $$ROOT and $$CURRENT.
func (c *Ctx) SetRoot(doc bson.Raw) {
	v := Doc(doc)
	c.Vars[SlotRoot] = v
	c.Vars[SlotCurrent] = v
}

// Set gives the variable in slot its value, growing Vars when a scope
// handed out slots after the context was made.
func (c *Ctx) Set(slot int, v bson.RawValue) {
	for slot >= len(c.Vars) {
		c.Vars = append(c.Vars, bson.RawValue{})
	}
	c.Vars[slot] = v
}

// Get returns the value of the variable in slot (missing when unset).
func (c *Ctx) Get(slot int) bson.RawValue {
	if slot < len(c.Vars) {
		return c.Vars[slot]
	}
	return bson.RawValue{}
}

// Rand returns a float in [0, 1) from the context's random source.
func (c *Ctx) Rand() float64 {
	if c.rand == nil {
		c.rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return c.rand.Float64()
}
