package solver

import (
	"cmp"
	"slices"

	"github.com/go-air/gini/z"
)

// Explaining infeasibility.
//
// Only mandatory units and requires/same_choice force units in; excludes,
// at_most and the capacity only forbid. So every pack must contain the
// closure of the mandatory units under requires and same_choice, and the
// problem is feasible exactly when that closure (at its cheapest variants)
// breaks no excludes or at_most and fits the capacity. A conflict is a set
// of mandatory units and constraints that already makes the closure fail.
//
// A logical conflict (excludes/at_most) is first narrowed by gini: the
// compiled admissibility model (circuit.go) has one activation literal per
// mandatory unit and per constraint; assuming them all, Why() returns the
// failed ones. Deletion with the
// closure check (which also counts capacity) then makes the set
// subset-minimal: dropping any element makes the rest satisfiable.

// element is a mandatory unit (unit >= 0) or a constraint (con >= 0).
type element struct{ unit, con int }

func (sv *solver) explain() Solution {
	p := sv.p
	var elems []element
	for i, u := range p.Units {
		if u.Mandatory {
			elems = append(elems, element{unit: i, con: -1})
		}
	}
	for i := range p.Constraints {
		elems = append(elems, element{unit: -1, con: i})
	}
	logical, excess := sv.closureCheck(elems)
	core := elems
	if logical {
		core = sv.logicalCore(elems)
	}
	core = sv.minimise(core)
	c := &Conflict{Excess: excess}
	for _, e := range core {
		if e.unit >= 0 {
			c.Units = append(c.Units, p.Units[e.unit].ID)
		} else {
			c.Constraints = append(c.Constraints, e.con)
		}
	}
	st := sv.stats
	st.Phase = "explain"
	return Solution{Status: Infeasible, Conflict: c, Stats: st}
}

// closureCheck computes the closure of the active mandatory units under the
// active requires/same_choice constraints and reports whether an active
// excludes/at_most breaks it, and by how many tokens its cheapest variants
// exceed the capacity.
func (sv *solver) closureCheck(active []element) (logical bool, excess int64) {
	p := sv.p
	in := make([]bool, len(p.Units))
	var queue []int
	req := make(map[int][]int)
	same := make(map[int][]int) // unit -> active same_choice constraints
	for _, e := range active {
		if e.unit >= 0 {
			if !in[e.unit] {
				in[e.unit] = true
				queue = append(queue, e.unit)
			}
			continue
		}
		c := p.Constraints[e.con]
		switch c.Kind {
		case KindRequires:
			a := sv.index[c.A]
			req[a] = append(req[a], sv.index[c.B])
		case KindSameChoice:
			for _, id := range c.Group {
				same[sv.index[id]] = append(same[sv.index[id]], e.con)
			}
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		next := req[u]
		for _, ci := range same[u] {
			for _, id := range p.Constraints[ci].Group {
				next = append(next, sv.index[id])
			}
		}
		for _, v := range next {
			if !in[v] {
				in[v] = true
				queue = append(queue, v)
			}
		}
	}
	var tokens int64
	for u, ok := range in {
		if ok {
			tokens += slices.MinFunc(p.Units[u].Variants, func(a, b Variant) int { return cmp.Compare(a.Tokens, b.Tokens) }).Tokens
		}
	}
	for _, e := range active {
		if e.con < 0 {
			continue
		}
		c := p.Constraints[e.con]
		switch c.Kind {
		case KindExcludes:
			if in[sv.index[c.A]] && in[sv.index[c.B]] {
				logical = true
			}
		case KindAtMost:
			n := 0
			for _, id := range c.Group {
				if in[sv.index[id]] {
					n++
				}
			}
			if n > c.K {
				logical = true
			}
		}
	}
	return logical, max(tokens-p.Capacity, 0)
}

// minimise shrinks core by deletion to a subset-minimal set that is still
// infeasible (logically or by capacity). Elements necessary for a set stay
// necessary in its subsets, so one pass suffices. Constraints go first and
// cheap mandatory units before expensive ones, so the units that matter most
// stay in the explanation.
func (sv *solver) minimise(core []element) []element {
	p := sv.p
	minTok := func(e element) int64 {
		if e.unit < 0 {
			return -1
		}
		return slices.MinFunc(p.Units[e.unit].Variants, func(a, b Variant) int { return cmp.Compare(a.Tokens, b.Tokens) }).Tokens
	}
	order := slices.Clone(core)
	slices.SortStableFunc(order, func(a, b element) int { return cmp.Compare(minTok(a), minTok(b)) })
	for _, e := range order {
		trial := slices.DeleteFunc(slices.Clone(core), func(x element) bool { return x == e })
		if logical, ex := sv.closureCheck(trial); logical || ex > 0 {
			core = trial
		}
	}
	return core
}

// logicalCore returns the failed assumptions gini reports for elems over
// the compiled admissibility model without capacity: a contradictory
// subset (not necessarily minimal).
func (sv *solver) logicalCore(elems []element) []element {
	k := compile(sv.p, sv.index, true, nil)
	lit := func(e element) z.Lit {
		if e.unit >= 0 {
			return k.act[e.unit]
		}
		return k.con[e.con]
	}
	for _, e := range elems {
		k.g.Assume(lit(e))
	}
	sv.stats.SATVars, sv.stats.SATClauses = int(k.g.MaxVar()), k.clauses
	if k.g.Solve() != -1 {
		return elems // unreachable: the closure check said contradictory
	}
	failed := k.g.Why(nil)
	var out []element
	for _, e := range elems {
		if slices.Contains(failed, lit(e)) {
			out = append(out, e)
		}
	}
	return out
}
