package solver

import "slices"

// The core DP is an exact multiple-choice knapsack over the undecided items:
// a list of Pareto-optimal (tokens, utility) states per layer, pruned by
// Lagrangian bounds of the remaining layers against a target utility. Only
// states that can still reach the target survive, so with a good incumbent
// the lists stay short even at large capacities (Pisinger's idea). Each
// state is tested against a small grid of multipliers (see gridPoint).
//
// States live in buckets (see core.go): the bits of the live frontier
// slots, which enforce exclusions exactly, and the counts of selected
// members of the exactly enforced at_most groups, in mixed radix above
// them. A step maps each source bucket and option to a destination bucket
// or forbids it; lists that meet in a destination are merged. Stored
// values keep the group penalties μ, so one threshold serves every bucket
// up to an offset, and the final value adds back μ·count. Side
// constraints the DP does not enforce are relaxed; the search branches on
// them.
//
// Among states with equal tokens and utility in a bucket the one merged
// last wins (later options, later source buckets); among final buckets of
// equal value the one with fewer tokens, then the lower bucket. That makes
// the result deterministic.

// A dpStep decides one item.
type dpStep struct {
	item  int32
	opts  []int32 // allowed options ascending; −1 (omitted) first if allowed
	pen   int64   // scaled group penalty of every selected option
	gw    []int32 // weight in each exact group (nil: in none)
	delta int32   // bucket offset of a selected option: Σ gw[g]·stride[g]
	gpen  int64   // the part of pen due to exact groups: Σ μ_g·gw[g]

	// Frontier bits (see core.go): selecting is forbidden if the source
	// has a forbid bit; selecting sets set and own, omitting clears own;
	// release is cleared after the step.
	forbid, set, own, release uint8
	// Bound group: the step index of the keeper whose star this step is
	// counted in by the thresholds (−1: none), and whether it is that
	// keeper.
	bg     int32
	keeper bool
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

// dpList is a Pareto list of states with back-pointers.
type dpList struct {
	w, p     []int64
	par, opt []int32
}

type dpBuf struct {
	cw, cp  []int64  // current layer, bucket after bucket
	coff    []int32  // bucket b of the current layer: [coff[b], coff[b+1])
	next    dpList   // next layer
	noff    []int32
	acc     []dpList // per destination bucket
	tmp     dpList
	parLog  []int32
	optLog  []int32
	starts  []int // per layer: offset in parLog/optLog
	need    []int64
	delta   []int64 // per layer, grid point and slot: threshold offset of a set bit
	offs    []int64 // per bucket and grid point: threshold offset of the group counts
	needB   []int64 // the thresholds of one bucket
	touched []bool  // per destination bucket: merged into this layer
	keys    []int64 // prune's scratch
	sorted  []int64
}

// merge merges src shifted by (ow, op) into acc (using tmp), tagging the
// new entries with option k and parent parBase+j, keeping only states within capacity whose
// bound reaches the thresholds, and only Pareto-optimal ones. On ties the
// new entries win. A shifted state survives iff P − λ·W ≥ need[i] for
// every grid point i.
func (acc *dpList) merge(tmp *dpList, grid []gridPoint, srcW, srcP []int64, parBase int32, ow, op int64, k int32, need []int64, capacity int64) {
	tw, tp, tpar, topt := tmp.w[:0], tmp.p[:0], tmp.par[:0], tmp.opt[:0]
	nw, np, npar, nopt := acc.w, acc.p, acc.par, acc.opt
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
	ok := func(j int) bool {
		w, p := srcW[j]+ow, srcP[j]+op
		for i, g := range grid {
			if p-g.lam*w < need[i] {
				return false
			}
		}
		return true
	}
	if na == 0 {
		// Nothing to merge with: a shifted subset of a Pareto list is
		// Pareto already.
		for j := 0; j < nc; j++ {
			if ok(j) {
				tw = append(tw, srcW[j]+ow)
				tp = append(tp, srcP[j]+op)
				tpar = append(tpar, parBase+int32(j))
				topt = append(topt, k)
			}
		}
		acc.w, tmp.w = tw, nw
		acc.p, tmp.p = tp, np
		acc.par, tmp.par = tpar, npar
		acc.opt, tmp.opt = topt, nopt
		return
	}
	j := 0
	for j < nc && !ok(j) {
		j++
	}
	last := int64(neg)
	for x < na || j < nc {
		var w, p int64
		var par, o int32
		if x >= na || (j < nc && (srcW[j]+ow < nw[x] || (srcW[j]+ow == nw[x] && srcP[j]+op >= np[x]))) {
			w, p, par, o = srcW[j]+ow, srcP[j]+op, parBase+int32(j), k
			if x < na && w == nw[x] && p == np[x] {
				x++
			}
			for j++; j < nc && !ok(j); j++ {
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
	acc.w, tmp.w = tw, nw
	acc.p, tmp.p = tp, np
	acc.par, tmp.par = tpar, npar
	acc.opt, tmp.opt = topt, nopt
}

// dpGroups are the at_most groups a DP enforces exactly, with the frontier
// slots below them. A state's bucket is bits + Σ count_g·stride[g],
// count_g ≤ radix[g]−1.
type dpGroups struct {
	slots         int
	radix, stride []int32
	mu            []int64 // per group: the penalty per unit of weight in pen
	buckets       int     // 2^slots · Π radix
}

func (g *dpGroups) count(b, gi int) int32 { return int32(b) / g.stride[gi] % g.radix[gi] }

// fits reports whether a state in bucket b may select an item with group
// weights gw.
func (g *dpGroups) fits(b int, gw []int32) bool {
	for gi, w := range gw {
		if w > 0 && g.count(b, gi)+w >= g.radix[gi] {
			return false
		}
	}
	return true
}

// refund is Σ μ_g·(count_g − (radix_g−1)) ≤ 0 of bucket b: added to a
// stored value it turns the penalties of exact groups into their true
// (zero) cost, less the μ·K the caller adds back.
func (g *dpGroups) refund(b int) int64 {
	var r int64
	for gi := range g.radix {
		r += g.mu[gi] * int64(g.count(b, gi)-(g.radix[gi]-1))
	}
	return r
}

// A dpQuery asks for the best solution of a DP whose value is at least
// target.
type dpQuery struct {
	steps     []dpStep
	grp       *dpGroups
	slotGroup []int32 // per layer and frontier slot: the keeper's step, or −1
	capacity  int64
	target    int64 // scaled, as the result's p
	l         lagrange
	maxStates int
	// valueOnly keeps no back-pointers, so memory is bounded per layer
	// (maxStates states) rather than in total; the result then has the
	// optimum value without the choice.
	valueOnly bool
	// beam > 0 keeps only the beam most promising states per bucket: a
	// heuristic for a good pack, not a proof.
	beam int
}

// runDP solves max Σ(b·u − pen) subject to Σw ≤ capacity, the enforced
// exclusions and the exact groups over the steps, looking only for
// solutions whose value is at least target. It returns the canonical best
// such solution, or found == false if there is none. States hold the
// scaled penalised utility; the result adds back the refund of exact
// groups, so with no relaxed groups it is b·utility less Σ μ·K.
//
// stop is called before every layer with the number of states of the
// layer before; when it reports true the DP gives up.
func (m *model) runDP(q *dpQuery, stop func(states int) bool, buf *dpBuf) dpResult {
	steps, grp, l, capacity, target := q.steps, q.grp, q.l, q.capacity, q.target
	var res dpResult
	n := len(steps)
	if capacity < 0 {
		return res
	}
	grid := dpGrid(l, grp)
	L := len(grid)
	buf.thresholds(m, steps, q.slotGroup, grid, capacity, target, l.b)
	B := grp.buckets
	bitMask := 1<<grp.slots - 1
	// offs[b*L+i]: what bucket b's group counts add to grid point i's
	// thresholds.
	buf.offs = buf.offs[:0]
	for b := range B {
		r := -grp.refund(b)
		for _, g := range grid {
			buf.offs = append(buf.offs, (1-g.f)*r)
		}
	}
	if cap(buf.needB) < L {
		buf.needB = make([]int64, L)
	}
	thr := buf.needB[:L]
	if buf.bucketNeed(thr, 0, 0, grp.slots, L); slices.ContainsFunc(thr, func(x int64) bool { return x > 0 }) {
		return res // even the empty state cannot reach target
	}
	for len(buf.acc) < B {
		buf.acc = append(buf.acc, dpList{})
	}
	if cap(buf.touched) < B {
		buf.touched = make([]bool, B)
	}
	touched := buf.touched[:B]

	buf.cw = append(buf.cw[:0], 0)
	buf.cp = append(buf.cp[:0], 0)
	buf.coff = append(buf.coff[:0], 0)
	for range B {
		buf.coff = append(buf.coff, 1)
	}
	buf.parLog, buf.optLog, buf.starts = buf.parLog[:0], buf.optLog[:0], buf.starts[:0]
	res.states = 1
	for t := 0; t < n; t++ {
		if stop(len(buf.cw)) {
			res.stopped = true
			return res
		}
		s := &steps[t]
		it := &m.items[s.item]
		clear(touched)
		// dest returns the bucket that source bucket b reaches with an
		// option, or −1 if the option is forbidden there.
		dest := func(b int, selected bool) int {
			bits := b & bitMask
			if !selected {
				return (b &^ int(s.own)) &^ int(s.release)
			}
			if bits&int(s.forbid) != 0 || !grp.fits(b, s.gw) {
				return -1
			}
			return ((b | int(s.set) | int(s.own)) &^ int(s.release)) + int(s.delta)
		}
		for b := 0; b < B; b++ {
			lo, hi := buf.coff[b], buf.coff[b+1]
			if lo == hi {
				continue
			}
			for k, o := range s.opts {
				d := dest(b, o >= 0)
				if d < 0 {
					continue
				}
				if !touched[d] {
					touched[d] = true
					a := &buf.acc[d]
					a.w, a.p, a.par, a.opt = a.w[:0], a.p[:0], a.par[:0], a.opt[:0]
				}
				buf.bucketNeed(thr, t+1, d, grp.slots, L)
				var ow, op int64
				if o >= 0 {
					ow, op = it.opts[o].w, l.b*it.opts[o].u-s.pen
				}
				buf.acc[d].merge(&buf.tmp, grid, buf.cw[lo:hi], buf.cp[lo:hi], lo, ow, op, int32(k), thr, capacity)
			}
		}
		nx := &buf.next
		nx.w, nx.p, nx.par, nx.opt = nx.w[:0], nx.p[:0], nx.par[:0], nx.opt[:0]
		buf.noff = append(buf.noff[:0], 0)
		for d := 0; d < B; d++ {
			if touched[d] {
				a := &buf.acc[d]
				if q.beam > 0 && len(a.w) > q.beam {
					buf.bucketNeed(thr, t+1, d, grp.slots, L)
					buf.prune(a, q.beam, grid, thr)
				}
				nx.w = append(nx.w, a.w...)
				nx.p = append(nx.p, a.p...)
				nx.par = append(nx.par, a.par...)
				nx.opt = append(nx.opt, a.opt...)
			}
			buf.noff = append(buf.noff, int32(len(nx.w)))
		}
		if len(nx.w) == 0 {
			return res
		}
		if dpProfile && (t%40 == 0 || t == n-1) {
			it := &m.items[s.item]
			println("  layer", t, "states", len(nx.w), "wmax", it.opts[len(it.opts)-1].w, "umax", it.opts[len(it.opts)-1].u, "bg", s.bg)
		}
		res.states += len(nx.w)
		if q.valueOnly {
			if len(nx.w) > q.maxStates {
				res.overflow = true
				return res
			}
		} else {
			buf.starts = append(buf.starts, len(buf.parLog))
			buf.parLog = append(buf.parLog, nx.par...)
			buf.optLog = append(buf.optLog, nx.opt...)
			if len(buf.parLog) > q.maxStates {
				res.overflow = true
				return res
			}
		}
		buf.cw, nx.w = nx.w, buf.cw
		buf.cp, nx.p = nx.p, buf.cp
		buf.coff, buf.noff = buf.noff, buf.coff
	}
	// The best final state: the last (richest) of each bucket, valued with
	// its refund; ties go to fewer tokens, then the lower bucket.
	s := -1
	var best int64
	for b := 0; b < B; b++ {
		hi := int(buf.coff[b+1]) - 1
		if hi < int(buf.coff[b]) {
			continue
		}
		v := buf.cp[hi] + grp.refund(b)
		if s < 0 || v > best || (v == best && buf.cw[hi] < buf.cw[s]) {
			s, best = hi, v
		}
	}
	if s < 0 || best < target {
		return res
	}
	res.found = true
	res.w, res.p = buf.cw[s], best
	if q.valueOnly {
		return res
	}
	for t := n - 1; t >= 0; t-- {
		g := buf.starts[t] + s
		k := buf.optLog[g]
		s = int(buf.parLog[g])
		if o := steps[t].opts[k]; o >= 0 {
			res.choice = append(res.choice, dpPick{steps[t].item, o})
		}
	}
	return res
}

// prune keeps the beam states of a whose bounds exceed the thresholds
// thr by the most (the least slack over the grid), in order.
func (buf *dpBuf) prune(a *dpList, beam int, grid []gridPoint, thr []int64) {
	keys := buf.keys[:0]
	for j, w := range a.w {
		k := int64(1) << 62
		for i, g := range grid {
			k = min(k, a.p[j]-g.lam*w-thr[i])
		}
		keys = append(keys, k)
	}
	buf.keys = keys
	sorted := append(buf.sorted[:0], keys...)
	buf.sorted = sorted
	slices.Sort(sorted)
	cut := sorted[len(sorted)-beam]
	above := 0 // states strictly above cut: all kept
	for _, k := range keys {
		if k > cut {
			above++
		}
	}
	ties, n := beam-above, 0
	for j, k := range keys {
		if k > cut || (k == cut && ties > 0) {
			if k == cut {
				ties--
			}
			a.w[n], a.p[n], a.par[n], a.opt[n] = a.w[j], a.p[j], a.par[j], a.opt[j]
			n++
		}
	}
	a.w, a.p, a.par, a.opt = a.w[:n], a.p[:n], a.par[:n], a.opt[:n]
}

// bucketNeed writes into thr the thresholds of bucket d at layer t: the
// common ones, plus the offsets of its group counts and set bits.
func (buf *dpBuf) bucketNeed(thr []int64, t, d, slots, L int) {
	copy(thr, buf.need[t*L:(t+1)*L])
	for i := range thr {
		thr[i] += buf.offs[d*L+i]
	}
	for s := range slots {
		if d&(1<<s) != 0 {
			for i := range thr {
				thr[i] += buf.delta[(t*L+i)*maxSlots+s]
			}
		}
	}
}

// A gridPoint is one Lagrangian bound the DP tests states against: the
// capacity multiplier lam and, for the exact groups, the multipliers f·μ.
// Every point gives a valid bound, so a state must pass them all. Small
// capacity multipliers suit states with much room left and large ones
// states with little, so together they approximate the LP bound of each
// state's residual capacity, much tighter than one multiplier for states
// far from the break. Likewise f = 0 tightens buckets that have room
// left in the exact groups and f = 2 those that are nearly full.
type gridPoint struct {
	lam int64
	f   int64
}

var dpLamGrid = [][2]int64{{1, 1}, {1, 2}, {3, 4}, {9, 10}, {10, 9}, {4, 3}, {2, 1}}

// dpGrid returns the grid points around the multipliers l and grp.mu.
func dpGrid(l lagrange, grp *dpGroups) []gridPoint {
	var grid []gridPoint
	for _, f := range dpLamGrid {
		g := l.aMax
		if q := l.a / f[1]; q <= l.aMax/f[0] {
			g = q * f[0]
		}
		if len(grid) == 0 || g != grid[len(grid)-1].lam {
			grid = append(grid, gridPoint{lam: g, f: 1})
		}
	}
	if len(grp.radix) > 0 {
		grid = append(grid, gridPoint{lam: l.a, f: 0}, gridPoint{lam: l.a, f: 2})
	}
	return grid
}

// thresholds fills buf.need and buf.delta. need[t*L+i] is the least
// P − λ_i·w a state of layer t (before step t) needs to reach target
// under grid point i when all its bits are clear (row n: the final
// thresholds); delta[(t*L+i)*maxSlots+s] is what a set bit s adds.
//
// The bound of the remaining steps is separable by bound group: a keeper
// and the leaves counted with it contribute max(keeper, leaves) while the
// keeper is undecided and leaves only after, every other step its best
// option. A set bit means the keeper can no longer be selected (before
// it) or its leaves no longer can (after it).
func (buf *dpBuf) thresholds(m *model, steps []dpStep, slotGroup []int32, grid []gridPoint, capacity, target, scale int64) {
	n, L := len(steps), len(grid)
	buf.need = grow(buf.need, (n+1)*L)
	buf.delta = grow(buf.delta, (n+1)*L*maxSlots)
	need, delta := buf.need, buf.delta
	keeper := make([]int64, n) // per bound group (keeper step): its best value
	leaves := make([]int64, n) // Σ best of its remaining leaves
	undecided := make([]bool, n)
	for i, g := range grid {
		best := func(d *dpStep) int64 {
			b := int64(-1 << 62)
			pen := d.pen - (1-g.f)*d.gpen
			for _, o := range d.opts {
				v := int64(0)
				if o >= 0 {
					op := m.items[d.item].opts[o]
					v = scale*op.u - g.lam*op.w - pen
				}
				b = max(b, v)
			}
			return b
		}
		clear(leaves)
		clear(undecided)
		val := func(k int32) int64 {
			if undecided[k] {
				return max(keeper[k], leaves[k])
			}
			return leaves[k]
		}
		base := target - g.lam*capacity
		rest := int64(0)
		for t := n; t >= 0; t-- {
			if t < n {
				d := &steps[t]
				v := best(d)
				switch k := d.bg; {
				case k < 0:
					rest += v
				case d.keeper:
					old := val(k)
					keeper[k], undecided[k] = v, true
					rest += val(k) - old
				default:
					old := val(k)
					leaves[k] += v
					rest += val(k) - old
				}
			}
			need[t*L+i] = base - rest
			for s := range maxSlots {
				x := int64(0)
				if k := slotGroup[t*maxSlots+s]; k >= 0 {
					x = leaves[k]
					if undecided[k] {
						x = max(keeper[k], leaves[k]) - leaves[k]
					}
				}
				delta[(t*L+i)*maxSlots+s] = x
			}
		}
	}
}

func grow(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}
