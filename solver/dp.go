package solver

// The core DP is an exact multiple-choice knapsack over the undecided items:
// a list of Pareto-optimal (tokens, utility) states per layer, pruned by the
// Lagrangian bound of the remaining layers against a target utility. Only
// states that can still reach the target survive, so with a good incumbent
// the lists stay short even at large capacities (Pisinger's idea, with the
// LP multiplier as the bound).
//
// A star (a centre item that excludes a set of leaf items, such as a
// summary and the raw messages it covers) is solved exactly: from the
// states before the star, one branch takes the leaves with the centre
// omitted, the other takes a centre option with every leaf omitted, and
// the two lists are merged. Other side constraints are relaxed; the search
// branches on them.
//
// Layers run oldest first. Among states with equal tokens and utility the
// one whose latest layer takes the later (richer) option wins, which makes
// the result the canonical optimum of the tie-break rule.

type dpItem struct {
	item int32
	opts []int32 // allowed options ascending; −1 (omitted) first if allowed
	pen  int64   // scaled group penalty of every selected option
}

const (
	stepItem  = iota // one item (also a leaf inside a star)
	stepBegin        // a star starts: remember the states
	stepEnd          // a star ends: merge in the centre (d: its selected options)
)

type dpStep struct {
	kind int8
	d    dpItem
}

type dpResult struct {
	found    bool
	w, p     int64 // tokens and scaled penalised utility of the solution
	choice   []dpPick
	states   int
	overflow bool // MaxStates reached: no conclusion
	stopped  bool // a limit stopped the solver: no conclusion
}

type dpPick struct{ item, opt int32 }

type dpLayer struct {
	start int // offset in parLog/optLog
	step  int // index of the step that produced it
	from  int // stepEnd: layer of the states before the star (−1 = initial)
}

type dpBuf struct {
	cw, cp, ck []int64 // current layer; ck = cp − a·cw
	sw, sp, sk []int64 // states before the current star
	nw, np     []int64 // accumulator
	npar, nopt []int32
	tw, tp     []int64 // merge output
	tpar, topt []int32
	parLog     []int32
	optLog     []int32
	layers     []dpLayer
	need       []int64
}

// merge merges the accumulator with src shifted by (ow, op), tagging the
// new entries with option k, keeping only states within capacity whose
// bound reaches thr, and only Pareto-optimal ones. On ties the new entries
// win. key[j] = srcP[j] − a·srcW[j], so the bound test of a shifted state
// is key[j] ≥ thr − op + a·ow.
func (b *dpBuf) merge(a int64, srcW, srcP, key []int64, ow, op int64, k int32, thr, capacity int64) {
	tw, tp, tpar, topt := b.tw[:0], b.tp[:0], b.tpar[:0], b.topt[:0]
	nw, np, npar, nopt := b.nw, b.np, b.npar, b.nopt
	x, na := 0, len(nw)
	// Shifted states beyond the capacity never survive: srcW is ascending.
	nc := len(srcW)
	if room := capacity - ow; nc > 0 && srcW[nc-1] > room {
		lo, hi := 0, nc
		for lo < hi {
			mid := (lo + hi) / 2
			if srcW[mid] > room {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		nc = lo
	}
	need := thr - op + a*ow
	if na == 0 {
		// Nothing to merge with: a shifted subset of a Pareto list is
		// Pareto already.
		for j := 0; j < nc; j++ {
			if key[j] >= need {
				tw = append(tw, srcW[j]+ow)
				tp = append(tp, srcP[j]+op)
				tpar = append(tpar, int32(j))
				topt = append(topt, k)
			}
		}
		b.nw, b.tw = tw, nw
		b.np, b.tp = tp, np
		b.npar, b.tpar = tpar, npar
		b.nopt, b.topt = topt, nopt
		return
	}
	j := 0
	for j < nc && key[j] < need {
		j++
	}
	last := int64(neg)
	for x < na || j < nc {
		var w, p int64
		var par, o int32
		if x >= na || (j < nc && (srcW[j]+ow < nw[x] || (srcW[j]+ow == nw[x] && srcP[j]+op >= np[x]))) {
			w, p, par, o = srcW[j]+ow, srcP[j]+op, int32(j), k
			if x < na && w == nw[x] && p == np[x] {
				x++
			}
			for j++; j < nc && key[j] < need; j++ {
			}
		} else {
			w, p, par, o = nw[x], np[x], npar[x], nopt[x]
			x++
		}
		if p > last {
			last = p
			tw = append(tw, w)
			tp = append(tp, p)
			tpar = append(tpar, par)
			topt = append(topt, o)
		}
	}
	b.nw, b.tw = tw, nw
	b.np, b.tp = tp, np
	b.npar, b.tpar = tpar, npar
	b.nopt, b.topt = topt, nopt
}

// runDP solves max Σ(b·u − pen) subject to Σw ≤ capacity over the steps,
// looking only for solutions whose value is at least target (scaled). It
// returns the canonical best such solution, or found == false if there is
// none. States hold the scaled penalised utility; with no penalties that is
// b·utility, so ties are exactly ties in utility.
//
// stop is called before every layer with the number of states of the
// layer before; when it reports true the DP gives up.
func (m *model) runDP(steps []dpStep, capacity, target int64, l lagrange, maxStates int, stop func(states int) bool, buf *dpBuf) dpResult {
	return m.runDPMode(steps, capacity, target, l, maxStates, false, stop, buf)
}

// runDPMode is runDP; with valueOnly it keeps no back-pointers, so memory
// is bounded per layer (MaxStates states) rather than in total, and it
// returns the optimum value without the choice.
func (m *model) runDPMode(steps []dpStep, capacity, target int64, l lagrange, maxStates int, valueOnly bool, stop func(states int) bool, buf *dpBuf) dpResult {
	var res dpResult
	n := len(steps)
	if capacity < 0 {
		return res
	}
	// need[t]: a state before step t survives iff P − a·w ≥ need[t];
	// need[n] is the final threshold.
	a := l.a
	if cap(buf.need) < n+1 {
		buf.need = make([]int64, n+1)
	}
	need := buf.need[:n+1]
	best := func(d dpItem) int64 {
		b := int64(-1 << 62)
		for _, o := range d.opts {
			v := int64(0)
			if o >= 0 {
				op := m.items[d.item].opts[o]
				v = l.b*op.u - a*op.w - d.pen
			}
			b = max(b, v)
		}
		return b
	}
	base := target - a*capacity
	rest := int64(0)
	need[n] = base
	var afterStar, leaves int64 // inside a star (walking backwards)
	for t := n - 1; t >= 0; t-- {
		s := &steps[t]
		switch s.kind {
		case stepItem:
			rest += best(s.d)
			leaves += best(s.d)
		case stepEnd:
			// Entering stepEnd from the leaf branch: centre omitted.
			afterStar, leaves = rest, 0
		case stepBegin:
			// States before the star may take either branch.
			centre := best(steps[starEnd(steps, t)].d)
			rest = afterStar + max(leaves, centre)
		}
		need[t] = base - rest
	}
	if 0 < need[0] {
		return res
	}

	buf.cw = append(buf.cw[:0], 0)
	buf.cp = append(buf.cp[:0], 0)
	buf.parLog, buf.optLog, buf.layers = buf.parLog[:0], buf.optLog[:0], buf.layers[:0]
	res.states = 1
	beforeStar := -1
	inStar := false // the leaf branch may die out; the centre branch may not
	for t := 0; t < n; t++ {
		if stop(len(buf.cw)) {
			res.stopped = true
			return res
		}
		s := &steps[t]
		thr := need[t+1]
		buf.nw, buf.np, buf.npar, buf.nopt = buf.nw[:0], buf.np[:0], buf.npar[:0], buf.nopt[:0]
		lay := dpLayer{start: len(buf.parLog), step: t}
		buf.ck = buf.ck[:0]
		for j, w := range buf.cw {
			buf.ck = append(buf.ck, buf.cp[j]-a*w)
		}
		switch s.kind {
		case stepBegin:
			buf.sw = append(buf.sw[:0], buf.cw...)
			buf.sp = append(buf.sp[:0], buf.cp...)
			buf.sk = append(buf.sk[:0], buf.ck...)
			beforeStar = len(buf.layers) - 1
			inStar = true
			continue
		case stepItem:
			it := &m.items[s.d.item]
			for k, o := range s.d.opts {
				var ow, op int64
				if o >= 0 {
					ow, op = it.opts[o].w, l.b*it.opts[o].u-s.d.pen
				}
				buf.merge(a, buf.cw, buf.cp, buf.ck, ow, op, int32(k), thr, capacity)
			}
		case stepEnd:
			lay.from = beforeStar
			inStar = false
			it := &m.items[s.d.item]
			buf.merge(a, buf.cw, buf.cp, buf.ck, 0, 0, -1, thr, capacity)
			for k, o := range s.d.opts {
				buf.merge(a, buf.sw, buf.sp, buf.sk, it.opts[o].w, l.b*it.opts[o].u-s.d.pen, int32(k), thr, capacity)
			}
		}
		if len(buf.nw) == 0 && !inStar {
			return res
		}
		res.states += len(buf.nw)
		if valueOnly {
			if len(buf.nw) > maxStates {
				res.overflow = true
				return res
			}
		} else {
			buf.layers = append(buf.layers, lay)
			buf.parLog = append(buf.parLog, buf.npar...)
			buf.optLog = append(buf.optLog, buf.nopt...)
			if len(buf.parLog) > maxStates {
				res.overflow = true
				return res
			}
		}
		buf.cw, buf.nw = buf.nw, buf.cw
		buf.cp, buf.np = buf.np, buf.cp
	}
	s := len(buf.cw) - 1
	if buf.cp[s] < target {
		return res
	}
	res.found = true
	res.w, res.p = buf.cw[s], buf.cp[s]
	if valueOnly {
		return res
	}
	for li := len(buf.layers) - 1; li >= 0; {
		lay := buf.layers[li]
		g := lay.start + s
		k := buf.optLog[g]
		s = int(buf.parLog[g])
		st := &steps[lay.step]
		switch {
		case st.kind == stepItem:
			res.choice = append(res.choice, dpPick{st.d.item, st.d.opts[k]})
			li--
		case k < 0: // star with the centre omitted: continue into the leaves
			li--
		default: // star with the centre selected: leaves stay omitted
			res.choice = append(res.choice, dpPick{st.d.item, st.d.opts[k]})
			li = lay.from
		}
	}
	return res
}

// starEnd returns the index of the stepEnd closing the star opened at t.
func starEnd(steps []dpStep, t int) int {
	for steps[t].kind != stepEnd {
		t++
	}
	return t
}
