package solver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Solve finds the pack of maximum utility for p: one variant or omission
// per unit, total tokens at most p.Capacity, every mandatory unit selected
// and every constraint satisfied. A nil opts means the zero [Options].
//
// The returned error is non-nil only for an invalid problem or options (the
// message names the field), when ctx is cancelled (ctx.Err() is returned
// unchanged), or when the deadline has already passed on entry
// ([ErrTimeout]). Infeasibility is not an error: the Solution then has
// Status [Infeasible] and a [Conflict]. When a limit stops the search,
// Solve returns the best pack found with Status [Feasible], a proven Bound
// and the limit in Stats.Limit. The deciding limits are work budgets, so
// the same problem and options give the same Solution (but for
// Stats.Elapsed) on any machine; only the wall-clock safety net
// (Options.TimeLimit, the context's deadline) can make runs differ, and
// Stats.Limit then says [LimitTime].
//
// Solve does not modify p, keeps no reference to it, starts no goroutines,
// and is safe to call concurrently.
func Solve(ctx context.Context, p *Problem, opts *Options) (sol Solution, err error) {
	defer func() {
		// A broken invariant is a bug, reported as an error, never a
		// panic in the caller's goroutine.
		if r := recover(); r != nil {
			sol, err = Solution{}, fmt.Errorf("%w: %v", ErrInternal, r)
		}
	}()
	start := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return Solution{}, err
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Solution{}, fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		return Solution{}, err
	}
	index, err := p.validate()
	if err != nil {
		return Solution{}, err
	}
	deadline, hasDeadline := ctx.Deadline()
	if o.TimeLimit > 0 {
		if d := start.Add(o.TimeLimit); !hasDeadline || d.Before(deadline) {
			deadline, hasDeadline = d, true
		}
	}
	sv := &solver{p: p, index: index, o: o, ctx: ctx, deadline: deadline, hasDeadline: hasDeadline}
	sol, err = sv.solve()
	if sv.cancelled != nil {
		return Solution{}, sv.cancelled
	}
	sol.Stats.Elapsed = time.Since(start)
	return sol, err
}

type solver struct {
	p           *Problem
	index       map[string]int
	o           Options
	ctx         context.Context
	deadline    time.Time
	hasDeadline bool
	ticks       int
	cancelled   error // ctx was cancelled (not timed out) during the search

	m     *model
	l     lagrange
	segs  []segment
	alive [][]int32 // per item: options that can still reach the incumbent (−1 = omitted)
	mu    []int64   // per at_most group: scaled Lagrange multiplier (root)
	pen   []int64   // per item: Σ mu·weight over its groups (root)
	muK   int64     // Σ mu·K (root)
	root  []int8    // root status after reduced-cost fixing

	best       []int32 // incumbent, item level
	bestU      int64
	bestW      int64
	ub         int64
	stats      Stats
	buf        dpBuf
	violations []int32
	stepsTmp   []dpStep
	grp        dpGroups // the groups the current DP enforces exactly
	exact      []bool   // per group: in grp
	nodeMu     []int64  // the current node's group multipliers
	inDP       []int32  // per item: its step in the current DP, or −1
	slotGroup  []int32  // per DP layer and frontier slot: the keeper's step, −2−g for chain segment g, or −1
	gen        uint64   // generation of the steps last built
}

// stop charges work units to the budget and reports whether the search
// must stop. The work budget is checked on every call, so where it stops
// is the same on every machine; the clock and ctx (the safety net) are
// sampled only every few calls.
func (sv *solver) stop(work int) bool {
	sv.stats.Work += int64(work)
	if sv.stats.Limit != LimitNone || sv.cancelled != nil {
		return true
	}
	if sv.stats.Work > sv.o.MaxWork {
		sv.stats.Limit = LimitWork
		return true
	}
	sv.ticks++
	if sv.ticks&15 != 0 {
		return false
	}
	switch err := sv.ctx.Err(); {
	case err != nil && !errors.Is(err, context.DeadlineExceeded):
		sv.cancelled = err
	case err != nil || (sv.hasDeadline && time.Now().After(sv.deadline)):
		sv.stats.Limit = LimitTime
	}
	return sv.stats.Limit != LimitNone || sv.cancelled != nil
}

func (sv *solver) offer(sel []int32) {
	u, w := sv.m.totals(sel)
	if sv.m.better(sel, u, w, sv.best, sv.bestU, sv.bestW) {
		sv.best = append(sv.best[:0], sel...)
		sv.bestU, sv.bestW = u, w
	}
}

func (sv *solver) solve() (Solution, error) {
	m, ok := buildModel(sv.p, sv.index)
	sv.m = m
	sv.stats.Items = len(m.items)
	if !ok {
		return sv.explain(), nil
	}
	var minW int64
	for i, st := range m.root {
		if st == stIn {
			minW += m.items[i].opts[0].w
		}
	}
	if minW > m.capacity {
		return sv.explain(), nil
	}

	// Bound and incumbents.
	all := func(int, int32) bool { return true }
	l, segs, _, _, ok := lpBound(m, m.root, all)
	if !ok {
		panic("solver: root LP infeasible after the capacity check")
	}
	sv.l, sv.segs = l, segs
	sv.l.lp = l.a
	g := newBuilder(m)
	g.fill(segs)
	sv.offer(g.sel)
	g = newBuilder(m)
	g.newestFirst()
	sv.offer(g.sel)

	sv.violations = make([]int32, len(m.items))
	sv.exact = make([]bool, len(m.groups))
	sv.fix()
	sv.dpFix()
	sv.improve()
	sv.dpFix()
	sv.search()
	if l := sv.stats.Limit; sv.ub > sv.bestU && (l == LimitNodes || l == LimitStates) {
		// A structural limit stopped the search with work left: gini
		// gets the core (satcore.go).
		sv.stats.Phase, sv.stats.Limit = "sat", LimitNone
		sv.ub = min(sv.ub, max(sv.satSearch(), sv.bestU))
		if sv.ub > sv.bestU && sv.stats.Limit == LimitNone {
			sv.stats.Limit = l // gini could not take the core
		}
	}
	sol := sv.result()
	core := sv.coreUnits()
	if err := check(sv.p, sv.index, sol.Choice, core[:min(len(core), checkSumUnits)]); err != nil {
		return Solution{}, err
	}
	return sol, nil
}

// checkSumUnits bounds the units whose tokens the gini check sums with its
// adder; the others' tokens are a constant. An adder over a thousand
// 4-variant units would cost more than the solve (measured: 60 ms at
// 2,048 units), while the clauses and sorting networks stay complete.
const checkSumUnits = 128

// coreUnits returns the units of the items reduced-cost fixing left
// undecided.
func (sv *solver) coreUnits() []int {
	var us []int
	for i, a := range sv.alive {
		if len(a) > 1 {
			for _, u := range sv.m.items[i].units {
				us = append(us, int(u))
			}
		}
	}
	return us
}

func (sv *solver) result() Solution {
	sol := Solution{
		Status:  Optimal,
		Choice:  sv.m.unitChoice(sv.best),
		Utility: sv.bestU,
		Tokens:  sv.bestW,
		Bound:   max(sv.ub, sv.bestU),
		Stats:   sv.stats,
	}
	if sol.Bound > sol.Utility {
		sol.Status = Feasible
	}
	return sol
}
