package solver

import "slices"

// The search: best-first branch and bound over the side constraints the DP
// does not enforce, with the core DP (dp.go) as the relaxation at every
// node.

type node struct {
	parent *node
	item   int32
	val    int8
	bound  int64   // upper bound on utility inside this node
	mu     []int64 // group multipliers for this node's relaxation
}

// search runs best-first branch and bound over side-constraint violations,
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
				hi = min(t-1, floorDiv(res.bound+fp+muK, sv.l.b))
				nd.bound = hi
				if t <= sv.bestU || hi < sv.bestU {
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
