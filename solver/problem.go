package solver

import (
	"fmt"
)

// Limits on the input. They keep every intermediate sum of the exact integer
// arithmetic (scaled Lagrangian bounds) inside int64.
const (
	// MaxVariants is the largest number of variants a unit may have.
	MaxVariants = 16
	// MaxValue bounds a single variant's Tokens and Utility and the Capacity.
	MaxValue = 1_000_000_000_000 // 1e12
	// MaxTotalUtility bounds the sum over units of their largest variant utility.
	MaxTotalUtility = 1_000_000_000_000_000 // 1e15
)

// A Variant is one way of rendering a unit: a kind label (for example
// "verbatim" or "compact_summary"), its cost in tokens and its utility.
type Variant struct {
	Kind    string
	Tokens  int64
	Utility int64
}

// A Unit is one thing the pack may hold: a message, a warm artifact, the
// boundary, a section. A solution picks exactly one of its Variants, or
// omits it (taking no tokens and no utility) unless it is Mandatory.
type Unit struct {
	// ID names the unit in constraints and conflicts. It must be unique and
	// non-empty.
	ID string
	// Order is the unit's recency key: higher is newer. It only breaks ties
	// between optimal packs (see the package documentation); equal values
	// are allowed.
	Order int64
	// Mandatory units must take one of their variants.
	Mandatory bool
	// Variants lists 1..MaxVariants choices. Solution.Choice refers to them
	// by index.
	Variants []Variant
}

// ConstraintKind says which admissibility rule a [Constraint] states.
type ConstraintKind uint8

// The constraint kinds. Selection means "takes any variant", so constraints
// never distinguish between variants of a unit.
const (
	// KindRequires: if A is selected then B is selected.
	KindRequires ConstraintKind = iota + 1
	// KindExcludes: A and B are not both selected.
	KindExcludes
	// KindAtMost: at most K units of Group are selected.
	KindAtMost
	// KindSameChoice: the units of Group are all selected or all omitted.
	KindSameChoice
)

// String returns the lower-case name of the kind, as used in Prolog
// (requires, excludes, at_most, same_choice).
func (k ConstraintKind) String() string {
	switch k {
	case KindRequires:
		return "requires"
	case KindExcludes:
		return "excludes"
	case KindAtMost:
		return "at_most"
	case KindSameChoice:
		return "same_choice"
	}
	return fmt.Sprintf("ConstraintKind(%d)", uint8(k))
}

// A Constraint is one admissibility rule over unit IDs. Build it with
// [Requires], [Excludes], [AtMost] or [SameChoice].
type Constraint struct {
	Kind  ConstraintKind
	A, B  string   // KindRequires, KindExcludes
	K     int      // KindAtMost
	Group []string // KindAtMost, KindSameChoice
}

// Requires states that selecting unit a forces unit b to be selected (a tool
// result needs its tool call).
func Requires(a, b string) Constraint { return Constraint{Kind: KindRequires, A: a, B: b} }

// Excludes states that units a and b are never both selected (a summary and
// a raw message it covers).
func Excludes(a, b string) Constraint { return Constraint{Kind: KindExcludes, A: a, B: b} }

// AtMost states that at most k units of group are selected.
func AtMost(k int, group ...string) Constraint {
	return Constraint{Kind: KindAtMost, K: k, Group: group}
}

// SameChoice states that the units of group are all selected or all omitted
// (an atomic tool-call group). Each unit still picks its own variant.
func SameChoice(group ...string) Constraint {
	return Constraint{Kind: KindSameChoice, Group: group}
}

// String renders the constraint in Prolog-like form, for example
// requires(r1, c1) or at_most(2, [a, b, c]).
func (c Constraint) String() string {
	switch c.Kind {
	case KindRequires, KindExcludes:
		return fmt.Sprintf("%s(%s, %s)", c.Kind, c.A, c.B)
	case KindAtMost:
		return fmt.Sprintf("at_most(%d, %v)", c.K, groupString(c.Group))
	case KindSameChoice:
		return fmt.Sprintf("same_choice(%v)", groupString(c.Group))
	}
	return c.Kind.String()
}

func groupString(g []string) string {
	s := "["
	for i, id := range g {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s + "]"
}

// A Problem is one packing instance: choose one variant (or omission) per
// unit to maximise total utility with total tokens at most Capacity and
// every constraint satisfied. Solve does not modify or retain it.
type Problem struct {
	Units       []Unit
	Capacity    int64
	Constraints []Constraint
}

// validate checks p and returns the unit index by ID. Errors name the field.
func (p *Problem) validate() (map[string]int, error) {
	if p.Capacity < 0 || p.Capacity > MaxValue {
		return nil, fmt.Errorf("solver: Capacity: must be in [0, %d] (got %d)", int64(MaxValue), p.Capacity)
	}
	index := make(map[string]int, len(p.Units))
	var total int64
	for i := range p.Units {
		u := &p.Units[i]
		if u.ID == "" {
			return nil, fmt.Errorf("solver: Units[%d].ID: must be non-empty", i)
		}
		if j, dup := index[u.ID]; dup {
			return nil, fmt.Errorf("solver: Units[%d].ID: duplicate of Units[%d] (%q)", i, j, u.ID)
		}
		index[u.ID] = i
		if n := len(u.Variants); n < 1 || n > MaxVariants {
			return nil, fmt.Errorf("solver: Units[%d].Variants: must have 1..%d variants (got %d)", i, MaxVariants, n)
		}
		var best int64
		for j, v := range u.Variants {
			if v.Tokens < 0 || v.Tokens > MaxValue {
				return nil, fmt.Errorf("solver: Units[%d].Variants[%d].Tokens: must be in [0, %d] (got %d)", i, j, int64(MaxValue), v.Tokens)
			}
			if v.Utility < 0 || v.Utility > MaxValue {
				return nil, fmt.Errorf("solver: Units[%d].Variants[%d].Utility: must be in [0, %d] (got %d)", i, j, int64(MaxValue), v.Utility)
			}
			best = max(best, v.Utility)
		}
		total += best
		if total > MaxTotalUtility {
			return nil, fmt.Errorf("solver: Units: total utility exceeds %d", int64(MaxTotalUtility))
		}
	}
	for i, c := range p.Constraints {
		known := func(field, id string) error {
			if _, ok := index[id]; !ok {
				return fmt.Errorf("solver: Constraints[%d].%s: unknown unit %q", i, field, id)
			}
			return nil
		}
		switch c.Kind {
		case KindRequires, KindExcludes:
			if err := known("A", c.A); err != nil {
				return nil, err
			}
			if err := known("B", c.B); err != nil {
				return nil, err
			}
			if c.A == c.B {
				return nil, fmt.Errorf("solver: Constraints[%d].B: must differ from A (got %q)", i, c.B)
			}
		case KindAtMost, KindSameChoice:
			if c.Kind == KindAtMost && c.K < 0 {
				return nil, fmt.Errorf("solver: Constraints[%d].K: must be >= 0 (got %d)", i, c.K)
			}
			if len(c.Group) == 0 {
				return nil, fmt.Errorf("solver: Constraints[%d].Group: must be non-empty", i)
			}
			seen := make(map[string]bool, len(c.Group))
			for j, id := range c.Group {
				if err := known(fmt.Sprintf("Group[%d]", j), id); err != nil {
					return nil, err
				}
				if seen[id] {
					return nil, fmt.Errorf("solver: Constraints[%d].Group[%d]: duplicate unit %q", i, j, id)
				}
				seen[id] = true
			}
		default:
			return nil, fmt.Errorf("solver: Constraints[%d].Kind: unknown kind %d", i, uint8(c.Kind))
		}
	}
	return index, nil
}
