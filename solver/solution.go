package solver

import (
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is returned (wrapped, together with the context's error) when
// the deadline has already passed when Solve is called, so that not even a
// feasible pack could be computed. Once Solve is running, a deadline never
// produces an error: it produces a [Feasible] solution with its bound and
// [LimitTime] in [Stats].Limit.
var ErrTimeout = errors.New("solver: time limit exceeded")

// Status says how much a [Solution] is worth.
type Status uint8

const (
	// Optimal: the choice is proven to maximise utility (Bound == Utility).
	Optimal Status = iota + 1
	// Feasible: a limit stopped the search (Stats.Limit says which). The
	// choice is valid and Bound is a proven upper bound on the optimum.
	Feasible
	// Infeasible: no choice satisfies the mandatory units, the constraints
	// and the capacity. Conflict explains why.
	Infeasible
)

// String returns "optimal", "feasible" or "infeasible".
func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Feasible:
		return "feasible"
	case Infeasible:
		return "infeasible"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// A Solution is the result of [Solve]. The caller owns its slices.
type Solution struct {
	Status Status
	// Choice has one entry per Problem.Units: the index of the chosen
	// variant, or -1 when the unit is omitted. Nil when Infeasible.
	Choice []int
	// Utility and Tokens are the totals of Choice.
	Utility, Tokens int64
	// Bound is a proven upper bound on the optimal utility. It equals
	// Utility when Status is Optimal, and is 0 when Infeasible.
	Bound int64
	// Conflict explains an Infeasible problem; nil otherwise.
	Conflict *Conflict
	// Stats describes the work done. It is informational only.
	Stats Stats
}

// A Conflict is a subset-minimal reason for infeasibility: with only these
// units mandatory and only these constraints (plus the capacity), the
// problem is still infeasible, and dropping any one of them makes it
// feasible.
type Conflict struct {
	// Units are IDs of mandatory units in the conflict, in Problem order.
	Units []string
	// Constraints are indices into Problem.Constraints, ascending.
	Constraints []int
	// Excess is the number of tokens by which the content forced by all
	// mandatory units and the requires/same_choice constraints exceeds
	// Capacity, at the cheapest variant of each unit: the least the caller
	// must cut. It is 0 when the forced content fits and the conflict is
	// logical (an excludes or at_most group the forced content breaks).
	Excess int64
}

// String renders the conflict for error messages.
func (c *Conflict) String() string {
	if c == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("units %v, constraints %v", c.Units, c.Constraints)
	if c.Excess > 0 {
		s += fmt.Sprintf(", %d tokens over capacity", c.Excess)
	}
	return s
}

// A Limit names the limit that stopped a search early.
type Limit uint8

const (
	// LimitNone: no limit was reached; the search ran to completion.
	LimitNone Limit = iota
	// LimitWork: Options.MaxWork, the deterministic work budget.
	LimitWork
	// LimitNodes: Options.MaxNodes, the deterministic node budget.
	LimitNodes
	// LimitStates: Options.MaxStates left a search node undecided.
	LimitStates
	// LimitTime: Options.TimeLimit or the context's deadline, the
	// wall-clock safety net. It is the only limit whose effect depends on
	// the machine: a result it cut may differ between runs.
	LimitTime
)

// String returns "none", "work", "nodes", "states" or "time".
func (l Limit) String() string {
	switch l {
	case LimitNone:
		return "none"
	case LimitWork:
		return "work"
	case LimitNodes:
		return "nodes"
	case LimitStates:
		return "states"
	case LimitTime:
		return "time"
	}
	return fmt.Sprintf("Limit(%d)", uint8(l))
}

// Stats describes how a solution was found.
type Stats struct {
	// Limit names the limit that stopped the search, or LimitNone. A
	// Feasible solution always names one; an Optimal one may too (the
	// search stopped, but the incumbent had already met the bound).
	Limit Limit
	// Work is the deterministic work done, in the units of
	// Options.MaxWork. The same problem and options give the same Work on
	// any machine unless Limit is LimitTime.
	Work int64
	// Phase is the stage that decided the result: "presolve" (bound and
	// reduced-cost fixing left nothing undecided), "dp" (one core DP at
	// the root), "search" (branch and bound over constraints with the DP
	// as relaxation), "sat" (gini searched the core after a structural
	// limit stopped the search) or "explain" (infeasible).
	Phase string
	// Items is the number of items after merging same-choice groups and
	// mutual requires; Core is the number left undecided after
	// reduced-cost fixing.
	Items, Core int
	// Nodes is the number of search nodes; States the number of DP states.
	Nodes, States int
	// SATVars and SATClauses size the gini encoding built to explain an
	// infeasible problem or to search the core (Phase "sat"); zero
	// otherwise. (The check of every pack builds one too; it is not
	// counted.)
	SATVars, SATClauses int
	// Elapsed is the wall time of the call.
	Elapsed time.Duration
}

// Options tune [Solve]. The zero value is ready to use; a nil *Options
// passes to Solve as the zero value.
//
// The limits that decide when a search stops are work budgets (MaxWork,
// MaxNodes, MaxStates), so that the same problem and options give the
// same pack on any machine, under any load. TimeLimit and the context's
// deadline are only a safety net for machines far slower than intended;
// Stats.Limit reports when one of them cut the search.
type Options struct {
	// MaxWork is the deterministic work budget of one call. One unit is
	// one DP state created, one item evaluated while tuning the Lagrange
	// multipliers or fixing options, or one search node; a slice of gini
	// search (20,000 propagations) counts 500,000, about as long. When it
	// is spent, Solve returns the best pack found with Status Feasible, a
	// proven Bound and Stats.Limit == LimitWork. Zero means
	// DefaultMaxWork.
	MaxWork int64
	// TimeLimit bounds the wall time of one call, on top of the context's
	// deadline. It is a safety net, not the deciding limit: when it
	// passes, Solve returns the best pack found with Status Feasible, a
	// proven Bound and Stats.Limit == LimitTime, and that pack may differ
	// between runs. Zero means DefaultTimeLimit; negative means no limit
	// other than the context.
	TimeLimit time.Duration
	// MaxStates bounds the number of DP states one dynamic-programming
	// pass keeps back-pointers for (8 bytes each, so the default costs up
	// to 32 MiB). A pass that would exceed it is redone without
	// back-pointers (bounding the node, possibly proving the incumbent).
	// It is a deterministic work limit. Zero means 1<<22.
	MaxStates int
	// MaxNodes bounds the number of search nodes; it is a deterministic
	// work limit. Zero means 100000.
	MaxNodes int
}

// Defaults for [Options]. DefaultMaxWork takes roughly a second on one
// core of a 2024 server; DefaultTimeLimit is ten times that, so that the
// work budget decides, not the clock, even under the race detector on a
// loaded machine.
const (
	DefaultMaxWork   = 25_000_000
	DefaultTimeLimit = 10 * time.Second
)

func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxStates < 0 {
		return r, fmt.Errorf("solver: Options.MaxStates: must be >= 0 (got %d)", r.MaxStates)
	}
	if r.MaxNodes < 0 {
		return r, fmt.Errorf("solver: Options.MaxNodes: must be >= 0 (got %d)", r.MaxNodes)
	}
	if r.MaxWork < 0 {
		return r, fmt.Errorf("solver: Options.MaxWork: must be >= 0 (got %d)", r.MaxWork)
	}
	if r.MaxWork == 0 {
		r.MaxWork = DefaultMaxWork
	}
	if r.TimeLimit == 0 {
		r.TimeLimit = DefaultTimeLimit
	}
	if r.MaxStates == 0 {
		r.MaxStates = 1 << 22
	}
	if r.MaxNodes == 0 {
		r.MaxNodes = 100000
	}
	return r, nil
}

// Evaluate checks choice against p (one entry per unit, -1 = omitted) and
// returns its totals. It returns an error naming the first violated rule:
// a bad index, an omitted mandatory unit, a constraint, or the capacity.
// It does not validate p itself beyond what it needs.
func (p *Problem) Evaluate(choice []int) (utility, tokens int64, err error) {
	if len(choice) != len(p.Units) {
		return 0, 0, fmt.Errorf("solver: choice has %d entries, want %d", len(choice), len(p.Units))
	}
	index := make(map[string]int, len(p.Units))
	for i, u := range p.Units {
		index[u.ID] = i
		c := choice[i]
		if c < -1 || c >= len(u.Variants) {
			return 0, 0, fmt.Errorf("solver: choice[%d]: variant %d out of range", i, c)
		}
		if c == -1 {
			if u.Mandatory {
				return 0, 0, fmt.Errorf("solver: choice[%d]: mandatory unit %q omitted", i, u.ID)
			}
			continue
		}
		utility += u.Variants[c].Utility
		tokens += u.Variants[c].Tokens
	}
	sel := func(id string) bool {
		i, ok := index[id]
		return ok && choice[i] >= 0
	}
	for i, c := range p.Constraints {
		bad := false
		switch c.Kind {
		case KindRequires:
			bad = sel(c.A) && !sel(c.B)
		case KindExcludes:
			bad = sel(c.A) && sel(c.B)
		case KindAtMost:
			n := 0
			for _, id := range c.Group {
				if sel(id) {
					n++
				}
			}
			bad = n > c.K
		case KindSameChoice:
			for _, id := range c.Group {
				if sel(id) != sel(c.Group[0]) {
					bad = true
				}
			}
		}
		if bad {
			return 0, 0, fmt.Errorf("solver: Constraints[%d] %v violated", i, c)
		}
	}
	if tokens > p.Capacity {
		return 0, 0, fmt.Errorf("solver: %d tokens exceed capacity %d", tokens, p.Capacity)
	}
	return utility, tokens, nil
}
