package solver

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	slotGroup  []int32  // per DP layer and frontier slot: the keeper's step, or −1
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
	if err := check(sv.p, sv.index, sol.Choice, sv.coreUnits()); err != nil {
		return Solution{}, err
	}
	return sol, nil
}

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

func (sv *solver) optVal(i int, o int32) int64 {
	if o < 0 {
		return 0
	}
	op := sv.m.items[i].opts[o]
	return sv.l.val(op.w, op.u) - sv.pen[i]
}

// setMultipliers installs the capacity multiplier a and the group
// multipliers mu, recomputing the item penalties.
func (sv *solver) setMultipliers(a int64, mu []int64) {
	m := sv.m
	sv.l.a = a
	sv.mu = mu
	sv.pen, sv.muK = m.penalties(mu, sv.pen)
}

// penalties returns each item's Σ mu·weight and Σ mu·K.
func (m *model) penalties(mu []int64, dst []int64) ([]int64, int64) {
	if cap(dst) < len(m.items) {
		dst = make([]int64, len(m.items))
	}
	dst = dst[:len(m.items)]
	clear(dst)
	var muK int64
	for gi, g := range m.groups {
		if mu[gi] == 0 {
			continue
		}
		muK += mu[gi] * int64(g.k)
		for k, it := range g.members {
			// Saturate: a penalty above any option's value already
			// excludes the item, and the sum must not overflow.
			dst[it] = min(dst[it]+mu[gi]*int64(g.weights[k]), 1<<60)
		}
	}
	return dst, muK
}

// multipliers improves the Lagrangian bound by coordinate descent over the
// group multipliers and the capacity multiplier. Any values give a valid
// bound; this only makes it tighter (the dual function is convex, so each
// coordinate is a ternary search).
func (sv *solver) multipliers() {
	m := sv.m
	mu := make([]int64, len(m.groups))
	sv.setMultipliers(sv.l.a, mu)
	if len(m.groups) == 0 {
		return
	}
	var maxVal int64
	for i := range m.items {
		for _, o := range sv.alive[i] {
			maxVal = max(maxVal, sv.optVal(i, o))
		}
	}
	aMax := int64(1) << 61 / (m.capacity + 1)
	aMax = min(aMax, maxVal+1)
	// ternary minimises f over [lo, hi] to 1/4096 of the range (any
	// multiplier gives a valid bound; precision only tightens it). It
	// charges one work unit per item an evaluation of f visits.
	ternary := func(lo, hi int64, cost int, f func(int64) int64) int64 {
		eval := func(x int64) int64 {
			sv.stats.Work += int64(cost)
			return f(x)
		}
		tol := max(2, (hi-lo)/4096)
		for hi-lo > tol {
			m1 := lo + (hi-lo)/3
			m2 := hi - (hi-lo)/3
			if eval(m1) <= eval(m2) {
				hi = m2
			} else {
				lo = m1
			}
		}
		bestX, bestF := lo, eval(lo)
		for _, x := range []int64{lo + (hi-lo)/2, hi} {
			if v := eval(x); v < bestF {
				bestX, bestF = x, v
			}
		}
		return bestX
	}
	for round := 0; round < 2; round++ {
		for gi, g := range m.groups {
			// Only the group's members (and their stars) depend on
			// mu[gi]: evaluate just those against a fixed rest.
			var items, stars []int32
			seen := map[int32]bool{}
			for _, it := range g.members {
				if si := m.starOf[it]; si >= 0 {
					if !seen[si] {
						seen[si] = true
						stars = append(stars, si)
					}
				} else {
					items = append(items, it)
				}
			}
			rest := sv.total() - sv.muK - sv.parts(items, stars)
			set := func(x int64) {
				for k, it := range g.members {
					sv.pen[it] = min(sv.pen[it]+(x-mu[gi])*int64(g.weights[k]), 1<<60)
				}
				sv.muK += (x - mu[gi]) * int64(g.k)
				mu[gi] = x
			}
			hi := min(maxVal+1, int64(1)<<60/int64(g.k+1)/int64(len(m.groups)))
			best := ternary(0, hi, len(g.members), func(x int64) int64 {
				set(x)
				return rest + sv.muK + sv.parts(items, stars)
			})
			sv.setMultipliers(sv.l.a, mu)
			mu[gi] = best
			sv.setMultipliers(sv.l.a, mu)
		}
		best := ternary(sv.l.a/4, min(aMax, sv.l.a*4+4), len(m.items), func(x int64) int64 {
			sv.l.a = x
			return sv.total()
		})
		sv.setMultipliers(best, mu)
		if sv.stop(0) {
			break
		}
	}
}

// itemVals returns item i's best alive value, 0 or neg for omission, and
// its best selected value (or neg), under the current multipliers.
func (sv *solver) itemVals(i int) (best, omit, sel int64) {
	best, omit, sel = neg, neg, neg
	for _, o := range sv.alive[i] {
		v := sv.optVal(i, o)
		best = max(best, v)
		if o < 0 {
			omit = 0
		} else {
			sel = max(sel, v)
		}
	}
	return best, omit, sel
}

// starVal returns the bound contribution of star si: max(centre selected
// with leaves omitted, centre omitted with leaves free).
func (sv *solver) starVal(si int32) int64 {
	st := &sv.m.stars[si]
	var leafOmit, leafBest int64
	for _, j := range st.leaves {
		b, o, _ := sv.itemVals(int(j))
		leafOmit = add(leafOmit, o)
		leafBest = add(leafBest, b)
	}
	_, co, cs := sv.itemVals(int(st.centre))
	return max(add(cs, leafOmit), add(co, leafBest))
}

// parts sums the bound contributions of the given non-star items and stars.
func (sv *solver) parts(items, stars []int32) int64 {
	var t int64
	for _, i := range items {
		b, _, _ := sv.itemVals(int(i))
		t = add(t, b)
	}
	for _, si := range stars {
		t = add(t, sv.starVal(si))
	}
	return t
}

// total is bounds().total without allocating.
func (sv *solver) total() int64 {
	m := sv.m
	t := sv.l.a*m.capacity + sv.muK
	for i := range m.items {
		if m.starOf[i] < 0 {
			b, _, _ := sv.itemVals(i)
			t = add(t, b)
		}
	}
	for si := range m.stars {
		t = add(t, sv.starVal(int32(si)))
	}
	return t
}

// fix performs reduced-cost fixing against the incumbent: an option whose
// Lagrangian bound (with the option forced) is below the incumbent's
// utility cannot be part of an optimal pack. Items left with only selected
// (or only omitted) options are then propagated as in (or out).
func (sv *solver) fix() {
	m := sv.m
	sv.alive = make([][]int32, len(m.items))
	for i, it := range m.items {
		st := m.root[i]
		if st != stIn {
			sv.alive[i] = append(sv.alive[i], -1)
		}
		if st != stOut {
			for o := range it.opts {
				sv.alive[i] = append(sv.alive[i], int32(o))
			}
		}
	}
	sv.multipliers()
	bd := sv.bounds()
	// Lagrangian greedy: give every star the mode its bound prefers,
	// then fill greedily.
	if len(m.stars) > 0 {
		g := newBuilder(m)
		for si, st := range m.stars {
			out := []int32{st.centre}
			if bd.star[si].a > bd.star[si].b {
				out = st.leaves
			}
			for _, j := range out {
				if g.s.status[j] == stFree {
					mark := len(g.s.trail)
					if !g.s.set(j, stOut) {
						g.s.undo(mark)
					}
				}
			}
		}
		g.fill(sv.segs)
		sv.offer(g.sel)
	}
	sv.root = m.root
	sv.refix()
}

// refix performs reduced-cost fixing against the incumbent on the current
// alive options and root status, and propagates what it decides.
//
// Every capacity multiplier gives a valid bound, so an option is dropped
// if the bound with it forced falls below the incumbent under any
// multiplier of the DP's grid: the one that prices an option best depends
// on how many tokens it takes, and the grid prunes far more than the
// LP multiplier alone.
func (sv *solver) refix() {
	m := sv.m
	need := sv.l.b * sv.bestU
	a := sv.l.a
	grid := dpGrid(sv.l)
	for k := 0; k < len(grid); k += 4 { // a quarter of the grid: dpFix does the rest on the core
		sv.l.a = grid[k]
		bd := sv.bounds()
		sv.stats.Work += int64(len(m.items))
		for i := range m.items {
			keep := sv.alive[i][:0]
			for _, o := range sv.alive[i] {
				if bd.forced(i, o) >= need {
					keep = append(keep, o)
				}
			}
			sv.alive[i] = keep
		}
	}
	sv.l.a = a
	sv.propagateFixing()
}

// propagateFixing propagates what fixing decided (items left with only
// omission out, items left with only selected options in) from the root
// status, and counts the core.
func (sv *solver) propagateFixing() {
	m := sv.m
	s := &searchState{m: m, status: slices.Clone(sv.root), inWeight: make([]int32, len(m.groups))}
	s.recount()
	for i := range m.items {
		if s.status[i] != stFree {
			continue
		}
		a := sv.alive[i]
		switch {
		case len(a) == 1 && a[0] == -1:
			if !s.set(int32(i), stOut) {
				panic("solver: reduced-cost fixing contradicts the incumbent")
			}
		case len(a) > 0 && a[0] >= 0:
			if !s.set(int32(i), stIn) {
				panic("solver: reduced-cost fixing contradicts the incumbent")
			}
		}
	}
	sv.root = s.status
	sv.stats.Core = 0
	for i := range m.items {
		sv.alive[i] = restrict(sv.alive[i], sv.root[i])
		if len(sv.alive[i]) > 1 {
			sv.stats.Core++
		}
	}
}

// Primal heuristic limits: rounds of improve and states per bucket.
const (
	maxImprove = 3
	beamWidth  = 16
)

// improve looks for a better incumbent with a beam DP over the root core
// (the exact DP keeping only the most promising states of each bucket) and
// re-fixes against it, while that helps: a near-optimal incumbent shrinks
// the core far more than the greedy ones.
func (sv *solver) improve() {
	m := sv.m
	sel := make([]int32, len(m.items))
	var steps []dpStep
	for range maxImprove {
		pen, muK := m.penalties(sv.mu, nil)
		sv.nodeMu = sv.mu
		var fw, fp int64
		var ok bool
		steps, fw, fp, ok = sv.steps(sv.root, sel, pen, steps)
		if !ok || len(steps) == 0 {
			return
		}
		q := dpQuery{steps: steps, grp: &sv.grp, slotGroup: sv.slotGroup, gen: sv.gen, capacity: m.capacity - fw,
			target: sv.l.b*(sv.bestU+1) - fp - muK, l: sv.l, maxStates: sv.o.MaxStates, beam: beamFor(len(steps))}
		res := m.runDP(&q, sv.stop, &sv.buf)
		sv.stats.States += res.states
		if !res.found {
			return
		}
		for _, st := range steps {
			sel[st.item] = -1
		}
		for _, pk := range res.choice {
			sel[pk.item] = pk.opt
		}
		before := sv.bestU
		if m.violation(sel, sv.root, sv.violations) != -1 {
			b := newBuilder(m)
			b.repair(sel, sv.segs)
			sv.offer(b.sel)
		} else {
			sv.offer(sel)
		}
		if sv.bestU == before {
			return
		}
		sv.dpFix()
	}
}

// restrict filters options by status.
func restrict(a []int32, st int8) []int32 {
	switch st {
	case stIn:
		if len(a) > 0 && a[0] == -1 {
			return a[1:]
		}
	case stOut:
		if len(a) > 0 && a[0] == -1 {
			return a[:1]
		}
		return nil
	}
	return a
}

type node struct {
	parent *node
	item   int32
	val    int8
	bound  int64   // upper bound on utility inside this node
	mu     []int64 // group multipliers for this node's relaxation
}

// search runs depth-first branch and bound over side-constraint violations,
// with the core DP as the relaxation at every node.
func (sv *solver) search() {
	m := sv.m
	stack := []*node{{item: -1, bound: sv.rootBound(), mu: sv.mu}}
	s := &searchState{m: m, status: make([]int8, len(m.items)), inWeight: make([]int32, len(m.groups))}
	sel := make([]int32, len(m.items))
	var steps []dpStep
	var pen []int64
	open := int64(-1) // bound of unresolved nodes
	overflowed := false
	for len(stack) > 0 {
		// Best first: the open node with the highest bound (newest on
		// ties), which also keeps the reported bound falling.
		{
			bi := len(stack) - 1
			for k := len(stack) - 2; k >= 0; k-- {
				if stack[k].bound > stack[bi].bound {
					bi = k
				}
			}
			stack[bi], stack[len(stack)-1] = stack[len(stack)-1], stack[bi]
		}
		nd := stack[len(stack)-1]
		if nd.bound < sv.bestU {
			stack = stack[:len(stack)-1]
			continue
		}
		if sv.stats.Nodes >= sv.o.MaxNodes && sv.stats.Limit == LimitNone {
			sv.stats.Limit = LimitNodes
		}
		if sv.stop(1) {
			break
		}
		stack = stack[:len(stack)-1]
		sv.stats.Nodes++
		// Apply the node's decisions to the fixed root.
		copy(s.status, sv.root)
		s.trail = s.trail[:0]
		s.recount()
		okNode := true
		for d := nd; d != nil && d.item >= 0; d = d.parent {
			if !s.set(d.item, d.val) {
				okNode = false
				break
			}
		}
		if !okNode {
			continue
		}
		mu := nd.mu
		lowers := 0
		for {
			var muK int64
			pen, muK = m.penalties(mu, pen)
			sv.nodeMu = mu
			// Relaxation: DP over the items with a choice left.
			var fw, fp int64
			steps, fw, fp, okNode = sv.steps(s.status, sel, pen, steps)
			if !okNode {
				break
			}
			// Guess the target from above: a DP that must reach a
			// target near the bound keeps few states. If it finds
			// nothing the bound drops below the target; if it finds a
			// solution, that is the relaxation's optimum. The lowest
			// target is the incumbent itself (ties included, for the
			// tie-break rule). A target that overflows MaxStates is too
			// low to decide; the search then stays above it, still
			// tightening the bound, and leaves the node open if it
			// cannot decide.
			var res dpResult
			hi := nd.bound
			delta := max(1, (hi-sv.bestU)/256)
			ovf := int64(-1) // highest target known to overflow
			for {
				t := max(sv.bestU, hi-delta)
				if t <= ovf {
					t = ovf + (hi-ovf)/2 + 1
				}
				if t > hi {
					res = dpResult{overflow: true}
					break
				}
				q := dpQuery{steps: steps, grp: &sv.grp, slotGroup: sv.slotGroup, gen: sv.gen, capacity: m.capacity - fw, target: sv.l.b*t - fp - muK, l: sv.l, maxStates: sv.o.MaxStates}
				res = m.runDP(&q, sv.stop, &sv.buf)
				sv.stats.States += res.states
				if res.found || res.stopped {
					break
				}
				if res.overflow {
					// Without back-pointers the DP still decides
					// whether the target is reachable, and if so its
					// optimum bounds the node.
					vq := q
					vq.valueOnly = true
					v := m.runDP(&vq, sv.stop, &sv.buf)
					sv.stats.States += v.states
					if v.stopped || v.overflow {
						ovf = t
						continue
					}
					if v.found {
						nd.bound = min(nd.bound, floorDiv(v.p+fp+muK, sv.l.b))
						if nd.bound <= sv.bestU {
							res = dpResult{} // the incumbent is optimal here
							break
						}
						// Knowing the optimum exactly, a DP aimed at it
						// keeps only states on optimal paths.
						q.target = v.p
						res = m.runDP(&q, sv.stop, &sv.buf)
						sv.stats.States += res.states
						if !res.found {
							res = dpResult{overflow: true}
						}
						break
					}
				}
				hi = t - 1
				nd.bound = hi
				if t <= sv.bestU {
					break
				}
				delta *= 2
			}
			if res.stopped || res.overflow {
				open = max(open, nd.bound)
				if res.overflow {
					overflowed = true
				}
				break
			}
			if !res.found {
				break
			}
			for _, st := range steps {
				sel[st.item] = -1
			}
			for _, pk := range res.choice {
				sel[pk.item] = pk.opt
			}
			bound := min(nd.bound, floorDiv(res.p+fp+muK, sv.l.b))
			x := m.violation(sel, s.status, sv.violations)
			if x == -1 {
				sv.offer(sel)
				// Optimal in this node unless a multiplier's group is
				// not full (complementary slackness). Then branch on the
				// most promising free member the solution leaves out,
				// keeping the multiplier (dropping it would let the
				// relaxation take every member again); with no such
				// member, the group cannot fill up and its multiplier is
				// dropped.
				var relaxed []int64
				branch := int32(-1)
				for gi, g := range m.groups {
					if mu[gi] == 0 || sv.exact[gi] || groupCount(g, sel) >= int32(g.k) {
						continue
					}
					bestV := int64(neg)
					for _, j := range g.members {
						if s.status[j] != stFree || sel[j] >= 0 {
							continue
						}
						for _, o := range sv.alive[j] {
							if v := sv.optVal(int(j), o); o >= 0 && v > bestV {
								bestV, branch = v, j
							}
						}
					}
					if branch >= 0 {
						break
					}
					if relaxed == nil {
						relaxed = slices.Clone(mu)
					}
					relaxed[gi] = 0
				}
				if branch >= 0 && lowers < maxLowers {
					// The bound falls as the multiplier of a group
					// that is not full falls (its subgradient K − count
					// is positive): step down to the next breakpoint,
					// where the best member left out becomes worth
					// taking, and solve the node again first.
					if next := sv.lower(mu, sel, s.status, pen); next != nil {
						nd.bound = bound
						mu = next
						lowers++
						continue
					}
				}
				if branch >= 0 {
					stack = append(stack,
						&node{parent: nd, item: branch, val: stOut, bound: bound, mu: mu},
						&node{parent: nd, item: branch, val: stIn, bound: bound, mu: mu})
					break
				}
				if relaxed == nil {
					break
				}
				mu = relaxed
				continue
			}
			if x < 0 {
				panic("solver: violated constraint without a free item")
			}
			b := newBuilder(m)
			b.repair(sel, sv.segs)
			sv.offer(b.sel)
			stack = append(stack,
				&node{parent: nd, item: x, val: stOut, bound: bound, mu: mu},
				&node{parent: nd, item: x, val: stIn, bound: bound, mu: mu})
			break
		}
		if sv.stats.Limit != LimitNone || sv.cancelled != nil {
			break
		}
	}
	// Whatever is left open bounds the optimum.
	ub := sv.bestU
	ub = max(ub, open)
	for _, nd := range stack {
		if nd.bound >= sv.bestU {
			ub = max(ub, nd.bound)
		}
	}
	sv.stats.Phase = "dp"
	if sv.stats.Nodes > 1 {
		sv.stats.Phase = "search"
	}
	if sv.stats.Core == 0 {
		sv.stats.Phase = "presolve"
	}
	sv.ub = ub
	if ub > sv.bestU && sv.stats.Limit == LimitNone && overflowed {
		sv.stats.Limit = LimitStates
	}
}

const maxLowers = 4

// lower returns mu with the multiplier of every group that the solution sel
// leaves short (and that has a positive multiplier) lowered to the next
// breakpoint of the separable bound: where the best free member left out
// stops losing against omission. It returns nil if nothing changes.
func (sv *solver) lower(mu []int64, sel []int32, status []int8, pen []int64) []int64 {
	m := sv.m
	var next []int64
	for gi, g := range m.groups {
		if mu[gi] == 0 || sv.exact[gi] || groupCount(g, sel) >= int32(g.k) {
			continue
		}
		step := int64(-1)
		for k, j := range g.members {
			if sel[j] >= 0 || status[j] != stFree {
				continue
			}
			r := -sv.regret(int(j), status, pen) / int64(g.weights[k])
			if step < 0 || r < step {
				step = r
			}
		}
		if step < 0 {
			continue
		}
		if next == nil {
			next = slices.Clone(mu)
		}
		next[gi] = max(0, mu[gi]-max(step, 0)-1)
	}
	return next
}

// regret is how much selecting item i beats omitting it under the node's
// penalties in the separable bound (for a star centre: centre mode
// against leaf mode).
func (sv *solver) regret(i int, status []int8, pen []int64) int64 {
	m := sv.m
	val := func(j int) (best, sel int64) {
		best, sel = neg, neg
		for _, o := range restrict(sv.alive[j], status[j]) {
			v := int64(0)
			if o >= 0 {
				op := m.items[j].opts[o]
				v = sv.l.val(op.w, op.u) - pen[j]
				sel = max(sel, v)
			}
			best = max(best, v)
		}
		return best, sel
	}
	_, sel := val(i)
	alt := int64(0)
	if si := m.starOf[i]; si >= 0 && m.stars[si].centre == int32(i) {
		for _, j := range m.stars[si].leaves {
			b, _ := val(int(j))
			alt = add(alt, b)
		}
	}
	if sel <= neg || alt <= neg {
		return 0
	}
	return sel - alt
}

func groupCount(g group, sel []int32) int32 {
	n := int32(0)
	for k, it := range g.members {
		if sel[it] >= 0 {
			n += g.weights[k]
		}
	}
	return n
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// rootBound is the Lagrangian bound of the whole problem, in utility units.
func (sv *solver) rootBound() int64 {
	return sv.bounds().total / sv.l.b
}

const neg = -(1 << 62)

// add is + with neg absorbing (neg means "no option").
func add(a, b int64) int64 {
	if a <= neg || b <= neg {
		return neg
	}
	return a + b
}

// bound holds the scaled Lagrangian bound over the alive options, with
// stars treated exactly (centre selected and leaves omitted, or centre
// omitted).
type bound struct {
	sv    *solver
	total int64
	best  []int64 // per item: best alive value
	omit  []int64 // per item: 0 if omitted is alive, else neg
	sel   []int64 // per item: best alive selected value, or neg
	star  []starBound
}

type starBound struct {
	a, b, val int64 // centre mode, leaves mode, max
	leafBest  int64 // Σ best over leaves
	leafOmit  int64 // 0 if every leaf may be omitted, else neg
}

func (sv *solver) bounds() bound {
	m := sv.m
	bd := bound{sv: sv, best: make([]int64, len(m.items)), omit: make([]int64, len(m.items)), sel: make([]int64, len(m.items))}
	for i := range m.items {
		bd.best[i], bd.omit[i], bd.sel[i] = neg, neg, neg
		for _, o := range sv.alive[i] {
			v := sv.optVal(i, o)
			bd.best[i] = max(bd.best[i], v)
			if o < 0 {
				bd.omit[i] = 0
			} else {
				bd.sel[i] = max(bd.sel[i], v)
			}
		}
	}
	total := sv.l.a*m.capacity + sv.muK
	for i := range m.items {
		if m.starOf[i] < 0 {
			total = add(total, bd.best[i])
		}
	}
	bd.star = make([]starBound, len(m.stars))
	for si, st := range m.stars {
		sb := &bd.star[si]
		for _, j := range st.leaves {
			sb.leafOmit = add(sb.leafOmit, bd.omit[j])
			sb.leafBest = add(sb.leafBest, bd.best[j])
		}
		sb.a = add(bd.sel[st.centre], sb.leafOmit)
		sb.b = add(bd.omit[st.centre], sb.leafBest)
		sb.val = max(sb.a, sb.b)
		total = add(total, sb.val)
	}
	bd.total = total
	return bd
}

// forced returns the scaled bound with item i forced to option o.
func (bd *bound) forced(i int, o int32) int64 {
	sv := bd.sv
	v := sv.optVal(i, o)
	si := sv.m.starOf[i]
	if si < 0 {
		return add(add(bd.total, -bd.best[i]), v)
	}
	st := &sv.m.stars[si]
	sb := &bd.star[si]
	rest := add(bd.total, -sb.val)
	if int(st.centre) == i {
		if o < 0 {
			return add(rest, sb.leafBest)
		}
		return add(rest, add(v, sb.leafOmit))
	}
	leaves := add(add(sb.leafBest, -bd.best[i]), v)
	if o < 0 {
		return add(rest, max(sb.a, add(bd.omit[st.centre], leaves)))
	}
	return add(rest, add(bd.omit[st.centre], leaves))
}

// recount recomputes group weights from status.
func (s *searchState) recount() {
	clear(s.inWeight)
	for gi, g := range s.m.groups {
		for k, it := range g.members {
			if s.status[it] == stIn {
				s.inWeight[gi] += g.weights[k]
			}
		}
	}
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

// beamFor is the beam width for a core of n steps: narrow on big cores,
// where a wide beam costs most and fixing has not yet had a good
// incumbent, wider once fixing has shrunk the core.
func beamFor(n int) int {
	return max(4, min(64, beamWidth*256/max(n, 1)))
}
