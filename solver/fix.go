package solver

import (
	"cmp"
	"slices"
)

// Reduced-cost fixing: options that cannot be part of a pack better than
// the incumbent are dropped before the search, first with the root
// Lagrangian bound (fix, refix), then with the DP's own bound (dpFix).

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

// dpFix is reduced-cost fixing with the DP's own bound at its first layer
// instead of the root Lagrangian bound: stars with the bound groups of
// core.go (each leaf counted with the keeper it is likeliest to lose to),
// chain segments by their best cut (a member forced in moves the cut past
// it, forced out before it; an attached item forced in needs the cut
// before its member), the exactly enforced at_most groups as the best
// gains of the room they have (the exact dual of the count), and every
// capacity multiplier of the DP's grid. An option is dropped if that bound, with the option
// forced, falls below the incumbent under any multiplier. On the full mix
// this bound is within a few hundred of the optimum where the Lagrangian
// one is thousands above it, so fixing shrinks the core several times.
func (sv *solver) dpFix() {
	m := sv.m
	pen, muK := m.penalties(sv.mu, nil)
	sv.nodeMu = sv.mu
	sel := make([]int32, len(m.items))
	steps, fw, fp, ok := sv.steps(sv.root, sel, pen, nil)
	if !ok || len(steps) == 0 {
		return
	}
	n := len(steps)
	need := sv.l.b*sv.bestU - fp - muK + sv.grp.muK // the DP's target for P
	member := poolMembers(steps, nil)
	G := len(sv.grp.radix)
	dead := make([][]bool, n) // per step and option index: dropped
	for t := range steps {
		dead[t] = make([]bool, len(steps[t].opts))
	}
	val := make([][]int64, n) // per step and option index: value under λ
	best := make([]int64, n)
	selV := make([]int64, n) // per step: best selected value
	out := make([]int64, n)  // per step: value left out (0, or best if it must be selected)
	var segs [][]int         // per chain segment: its steps, in order
	for t := range steps {
		if g := int(steps[t].chain); g >= 0 {
			for len(segs) <= g {
				segs = append(segs, nil)
			}
			segs[g] = append(segs[g], t)
		}
	}
	// Per segment step at position i: the value of the segment's steps
	// before it all open (F[i]), the bound of those after it open
	// (O[i+1]), and the best bound of closing at a member before it
	// (M[i]) or at it (M[i+1]); per segment, its bound (O[0]).
	cF, cO, cM0, cM1 := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	segBound := make([]int64, len(segs))
	var bO, bC []int64
	leaves := make([]int64, n)  // per keeper step: Σ best of its group's leaves
	pools := make([][]int64, G) // per group: member gains, clipped at 0, descending
	prefix := make([][]int64, G)
	for t := range val {
		val[t] = make([]int64, len(steps[t].opts))
	}
	for _, lam := range dpGrid(sv.l) {
		sv.stats.Work += int64(n)
		for t := range steps {
			d := &steps[t]
			best[t], out[t], selV[t] = stepBest(m, d, sv.l.b, lam)
			for k, o := range d.opts {
				v := int64(0)
				if o >= 0 {
					op := m.items[d.item].opts[o]
					v = sv.l.b*op.u - lam*op.w - (d.pen - d.gpen)
				}
				val[t][k] = v
			}
		}
		for g, ss := range segs {
			L := len(ss)
			bO, bC = append(bO[:0], make([]int64, L+1)...), append(bC[:0], make([]int64, L+1)...)
			for i := L - 1; i >= 0; i-- {
				t := ss[i]
				bO[i], bC[i] = chainStep(&steps[t], bO[i+1], bC[i+1], best[t], out[t], selV[t])
			}
			f, mx := int64(0), int64(neg)
			for i, t := range ss {
				d := &steps[t]
				cF[t], cO[t], cM0[t] = f, bO[i+1], mx
				if d.attached {
					f += out[t]
				} else {
					if d.opts[0] < 0 {
						mx = max(mx, f+bC[i+1])
					}
					f += selV[t]
				}
				cM1[t] = mx
			}
			segBound[g] = bO[0]
		}
		clear(leaves)
		for t := range steps {
			if k := steps[t].bg; k >= 0 && !steps[t].keeper {
				leaves[k] += best[t]
			}
		}
		// The bound: Σ free steps + Σ groups + the pools' top sums.
		for gi := range pools {
			pools[gi] = pools[gi][:0]
		}
		gain := make([]int64, n) // per pool member: its gain, clipped at 0
		total := int64(0)
		for t := range steps {
			d := &steps[t]
			switch {
			case d.chain >= 0:
				// counted with its segment
			case d.bg >= 0 && !d.keeper:
				// counted with its keeper
			case member[t] >= 0:
				rest := out[t]
				if d.keeper {
					rest = leaves[t]
				}
				total += rest
				gain[t] = max(best[t]-rest, 0)
				pools[member[t]] = append(pools[member[t]], gain[t])
			case d.keeper:
				total += max(best[t], leaves[t])
			default:
				total += best[t]
			}
		}
		for gi := range pools {
			slices.SortFunc(pools[gi], func(a, b int64) int { return cmp.Compare(b, a) })
			prefix[gi] = append(prefix[gi][:0], 0)
			for _, g := range pools[gi] {
				prefix[gi] = append(prefix[gi], prefix[gi][len(prefix[gi])-1]+g)
			}
		}
		room := func(gi int) int { return int(sv.grp.radix[gi] - 1) }
		// top is the best r gains of group gi; others the best r without
		// one gain g (r < 0: no pack, the option is infeasible).
		top := func(gi, r int) int64 { return prefix[gi][min(r, len(pools[gi]))] }
		others := func(gi, r int, g int64) int64 {
			p := pools[gi]
			switch {
			case r < 0:
				return neg
			case r == 0:
				return 0
			case r < len(p) && p[r-1] > g:
				return prefix[gi][r]
			}
			return prefix[gi][min(r+1, len(p))] - g
		}
		base := lam * (m.capacity - fw)
		for gi := range pools {
			base += top(gi, room(gi))
		}
		base += total
		for _, b := range segBound {
			base += b
		}
		for t := range steps {
			d := &steps[t]
			for k, o := range d.opts {
				if dead[t][k] {
					continue
				}
				v := val[t][k]
				var b int64 // the bound with option o forced
				switch g := int(member[t]); {
				case d.chain >= 0:
					// A member selected keeps its segment open up to it,
					// left out closes it there or before; an attached
					// item selected needs it closed before, left out
					// leaves both.
					var x int64
					switch {
					case !d.attached && o >= 0:
						x = cF[t] + v + cO[t]
					case !d.attached:
						x = cM1[t]
					case o >= 0:
						x = add(add(cM0[t], -best[t]), v)
					default:
						x = max(cF[t]+cO[t], add(cM0[t], -best[t]))
					}
					b = add(base-segBound[d.chain], x)
				case d.bg >= 0 && !d.keeper:
					// A leaf: its keeper's group changes; selected, it
					// excludes the keeper.
					kp := int(d.bg)
					l2 := leaves[kp] - best[t] + v
					if gk := int(member[kp]); gk >= 0 {
						var pool int64
						if o >= 0 {
							pool = others(gk, room(gk), gain[kp])
						} else {
							pool = max(others(gk, room(gk), gain[kp]), add(others(gk, room(gk)-1, gain[kp]), max(best[kp]-l2, 0)))
						}
						b = add(base-leaves[kp]-top(gk, room(gk))+l2, pool)
					} else {
						after := l2
						if o < 0 {
							after = max(best[kp], l2)
						}
						b = base - max(best[kp], leaves[kp]) + after
					}
				case g >= 0:
					// A pool member: selected, it takes its weight of
					// room and its value; left out, the others get it.
					rest := out[t]
					if d.keeper {
						rest = leaves[t]
					}
					if o >= 0 {
						b = add(base-rest-top(g, room(g))+v, others(g, room(g)-int(d.gw[g]), gain[t]))
					} else {
						b = add(base-top(g, room(g)), others(g, room(g), gain[t]))
					}
				case d.keeper:
					after := leaves[t]
					if o >= 0 {
						after = v
					}
					b = base - max(best[t], leaves[t]) + after
				default:
					b = base - best[t] + v
				}
				if b < need {
					dead[t][k] = true
				}
			}
		}
	}
	for t := range steps {
		i := steps[t].item
		keep := sv.alive[i][:0]
		for k, o := range steps[t].opts {
			if !dead[t][k] {
				keep = append(keep, o)
			}
		}
		sv.alive[i] = keep
	}
	sv.propagateFixing()
}
