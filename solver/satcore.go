package solver

import (
	"fmt"
	"time"

	"github.com/go-air/gini/z"
)

// Searching the reduced core with gini.
//
// When the search stops with nodes open for a structural limit (MaxNodes
// or MaxStates, not the work budget), gini gets the core: the compiled
// admissibility model (circuit.go) with the units reduced-cost fixing
// decided held at their options (valid for every pack that beats the
// incumbent), the capacity as a pseudo-Boolean constraint over the core
// units, and the objective as an adder U with one activation literal per
// target T for U ≥ T. Each improvement raises T past it; UNSAT under
// U ≥ T proves T−1 an upper bound.
//
// gini has no conflict budget, but Try(d) checks its deadline every
// 20,000 propagations (xo.PropTick). With d = 1ns the deadline has always
// passed at the first check, so Try(time.Nanosecond) is a deterministic
// slice of 20,000 propagations; learnt clauses persist between slices.
// Each slice is charged satSlice work units: on BenchmarkCoreSearch's
// cores a slice takes as long as about that many DP states, mostly in
// conflict analysis between propagation ticks.
//
// NB: never call Solve on this gini after Try: the deadline is sticky and
// Solve would stop at the first check too.

// satSlice is the work charged for one Try(time.Nanosecond).
const satSlice = 500_000

// satMaxCore bounds the core units gini is given: beyond a few dozen,
// CDCL proofs of knapsack optimality stop scaling (solver-notes §6.2).
const satMaxCore = 64

// satSearch searches the core with gini under U ≥ T for T above the
// incumbent until the work budget runs out. It offers what it finds and
// returns the proven upper bound, or sv.ub if it proves nothing better.
func (sv *solver) satSearch() int64 {
	p, m := sv.p, sv.m
	core := sv.coreUnits()
	if len(core) == 0 || len(core) > satMaxCore {
		return sv.ub
	}
	k := compile(p, sv.index, false, core)
	inCore := make([]bool, len(p.Units))
	allowed := make([][]bool, len(p.Units)) // core unit -> variants some alive option uses
	for _, u := range core {
		inCore[u] = true
		allowed[u] = make([]bool, len(p.Units[u].Variants))
	}
	var fixedW, fixedU int64
	choice := m.unitChoice(sv.best)
	for i, it := range m.items {
		for _, o := range sv.alive[i] {
			if o < 0 {
				continue
			}
			for j, u := range it.units {
				if inCore[u] {
					allowed[u][m.vars[int(it.opts[o].vars)+j]] = true
				}
			}
		}
	}
	for u := range p.Units {
		for v, x := range k.x[u] {
			switch {
			case inCore[u] && !allowed[u][v]:
				k.clause(x.Not())
			case !inCore[u] && v == choice[u]:
				k.clause(x)
			case !inCore[u]:
				k.clause(x.Not())
			}
		}
		if !inCore[u] && choice[u] >= 0 {
			fixedW += p.Units[u].Variants[choice[u]].Tokens
			fixedU += p.Units[u].Variants[choice[u]].Utility
		}
	}
	k.atMost(z.LitNull, k.sum(core, func(u, v int) int64 { return p.Units[u].Variants[v].Tokens }), p.Capacity-fixedW)
	util := k.sum(core, func(u, v int) int64 { return p.Units[u].Variants[v].Utility })
	sv.stats.SATVars, sv.stats.SATClauses = int(k.g.MaxVar()), k.clauses

	ub := sv.ub
	for target := sv.bestU + 1; target <= ub; {
		act := k.c.Lit()
		k.atLeast(act, util, target-fixedU)
		res := 0
		for res == 0 {
			if sv.stop(satSlice) {
				return ub
			}
			k.g.Assume(act)
			res = k.g.Try(time.Nanosecond)
		}
		if res < 0 {
			k.clause(act.Not()) // learnt clauses under it stay valid
			return target - 1
		}
		for u := range p.Units {
			if k.x[u] == nil {
				continue // in no rule and not in the core: keeps its fixed option
			}
			choice[u] = -1
			for v, x := range k.x[u] {
				if k.g.Value(x) {
					choice[u] = v
				}
			}
		}
		got, _, err := p.Evaluate(choice)
		if err != nil || got < target {
			panic(fmt.Sprintf("solver: gini's pack (utility %d, target %d) breaks the compiled model: %v", got, target, err))
		}
		sv.offerUnits(choice)
		target = got + 1
	}
	return ub
}

// offerUnits offers a unit-level pack: each item takes the first option
// (fewest tokens) that dominates its members' variants, so the pack stays
// admissible and is at least as good.
func (sv *solver) offerUnits(choice []int) {
	m := sv.m
	sel := make([]int32, len(m.items))
	for i, it := range m.items {
		sel[i] = -1
		if choice[it.units[0]] < 0 {
			continue
		}
		var w, u int64
		for _, x := range it.units {
			v := m.p.Units[x].Variants[choice[x]]
			w, u = w+v.Tokens, u+v.Utility
		}
		for o, op := range it.opts {
			if op.w <= w && op.u >= u {
				sel[i] = int32(o)
				break
			}
		}
		if sel[i] < 0 {
			panic("solver: no item option dominates a feasible combination")
		}
	}
	sv.offer(sel)
}
