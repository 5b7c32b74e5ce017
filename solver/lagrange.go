package solver

// The Lagrangian bound of the whole problem with stars kept exact and
// at_most groups priced by multipliers μ, the multiplier search that
// tightens it, and the bound with one option forced that reduced-cost
// fixing uses.

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
// coordinate is a ternary search). Without groups or stars the LP
// multiplier is already optimal. With stars the best capacity multiplier
// can be far below it, so when the best of [a/4, 4a] is at its bottom the
// search goes on down to 0: where summaries compete with the raws they
// cover, the LP (which ignores exclusions) prices every token at the
// raws' rate, while the rate that decides is the far lower one of trading
// a summary for its raws (BenchmarkWarmPack's 32k instance: a root bound
// 43% above the optimum at the LP multiplier, 0.2% at the tuned one).
func (sv *solver) multipliers() {
	m := sv.m
	mu := make([]int64, len(m.groups))
	sv.setMultipliers(sv.l.a, mu)
	if len(m.groups) == 0 && len(m.stars) == 0 {
		return // the LP multiplier is optimal
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
	rounds := 2
	if len(m.groups) == 0 {
		rounds = 1 // one coordinate: a second round finds the same
	}
	for round := 0; round < rounds; round++ {
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
		f := func(x int64) int64 {
			sv.l.a = x
			return sv.total()
		}
		lo, hi := sv.l.a/4, min(aMax, sv.l.a*4+4)
		best := ternary(lo, hi, len(m.items), f)
		if edge := lo + (hi-lo)/64; best <= edge && lo > 0 {
			// The minimum may lie below: summaries that compete with
			// their raws price a token far below the LP's rate.
			if x := ternary(0, edge, len(m.items), f); f(x) < f(best) {
				best = x
			}
			sv.stats.Work += 2 * int64(len(m.items))
		}
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
