package solver

import (
	"math"
	"math/bits"
	"slices"
	"sort"
)

// The core DP is an exact multiple-choice knapsack over the undecided items:
// a list of Pareto-optimal (tokens, utility) states per layer, pruned by
// Lagrangian bounds of the remaining layers against a target utility. Only
// states that can still reach the target survive, so with a good incumbent
// the lists stay short even at large capacities (Pisinger's idea). Each
// state is tested against a small grid of capacity multipliers (see
// dpGrid).
//
// States live in buckets (see core.go): the bits of the live frontier
// slots, which enforce exclusions and chains of requires exactly, and the
// counts of selected members of the exactly enforced at_most groups, in
// mixed radix above them. A step maps each source bucket and option to a destination bucket
// or forbids it; lists that meet in a destination are merged. A bucket's
// thresholds are the common ones plus offsets for its set bits and the
// room left in its groups. Side constraints the DP does not enforce are
// relaxed through their multipliers; the search branches on them.
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
	gpen  int64   // the part of pen due to exact groups, which the DP leaves out

	// Frontier bits (see core.go): selecting is forbidden if the source
	// has a forbid bit or lacks a needSet bit; selecting sets set and
	// own, omitting clears own and sets omitSet; release is cleared after
	// the step.
	forbid, set, own, release, omitSet, needSet uint8
	// Bound group: the step index of the keeper whose star this step is
	// counted in by the thresholds (−1: none), and whether it is that
	// keeper.
	bg     int32
	keeper bool
	// Chain segment (core.go): the segment this step is a member of or
	// attached to (−1: none), and which.
	chain    int32
	attached bool
}

type dpResult struct {
	// bound is an upper bound on the value (as target) of every solution:
	// the thresholds of the first layer, which hold whatever the target.
	bound    int64
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
	cw, cp  []int64 // current layer, bucket after bucket
	coff    []int32 // bucket b of the current layer: [coff[b], coff[b+1])
	next    dpList  // next layer
	noff    []int32
	acc     []dpList // per destination bucket
	tmp     dpList
	log     dpLog // the back-pointers of every layer
	need    []int64
	delta   []int64 // per layer, grid point and slot: threshold offset of a set bit
	topsum  []int64 // per version of an exact group's pool, room r and grid point: the best r member gains
	topOff  []int   // per layer and exact group: the offset of its pool's version in topsum
	needB   []int64 // the thresholds of one bucket
	touched []bool  // per destination bucket: merged into this layer
	gen     uint64  // the steps generation need, delta and topsum are for
	base    []int64 // per grid point: target − λ·capacity
	keys    []int64 // prune's scratch
	sorted  []int64
	th      thrScratch
}

// thrScratch is the scratch of thresholds, kept across the DPs of a solve
// (thresholds runs at every search node).
type thrScratch struct {
	keeper, leaves, open, closed []int64
	rest, all, gain              []int64
	undecided, changed, inPool   []bool
	cur                          []int
	member                       []int8
	pools                        [][]int64
}

// merge merges src shifted by (ow, op) into acc (using tmp), tagging the
// new entries with option k and parent parBase+j, keeping only states within capacity whose
// bound reaches the thresholds, and only Pareto-optimal ones. On ties the
// new entries win. A shifted state survives iff P − λ_i·W ≥ need[i] for
// every grid point i (ascending λ_i).
func (acc *dpList) merge(tmp *dpList, grid []int64, srcW, srcP []int64, parBase int32, ow, op int64, k int32, need []int64, capacity int64) {
	nw, np, npar, nopt := acc.w, acc.p, acc.par, acc.opt
	na := len(nw)
	np, npar, nopt = np[:na], npar[:na], nopt[:na]
	srcP = srcP[:len(srcW)]
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
	// The result has at most na+nc entries: sized up front, it is
	// written by index, with no growth checks in the loops.
	tw, tp := growTo(tmp.w, na+nc), growTo(tmp.p, na+nc)
	tpar, topt := growTo32(tmp.par, na+nc), growTo32(tmp.opt, na+nc)
	n := 0
	// A state passes if P ≥ λ_i·W + need[i] for the binding grid point i,
	// the line on top at W; W only grows, and so does the binding λ. ok
	// is called once per source state, in order.
	i := 0
	need = need[:len(grid)]
	ok := func(j int) bool {
		w := srcW[j] + ow
		lim := grid[i]*w + need[i]
		for i+1 < len(grid) {
			next := grid[i+1]*w + need[i+1]
			if next < lim {
				break
			}
			i, lim = i+1, next
		}
		return srcP[j]+op >= lim
	}
	if na == 0 {
		// Nothing to merge with: a shifted subset of a Pareto list is
		// Pareto already.
		for j := 0; j < nc; j++ {
			if ok(j) {
				tw[n], tp[n], tpar[n], topt[n] = srcW[j]+ow, srcP[j]+op, parBase+int32(j), k
				n++
			}
		}
	} else {
		j := 0
		for j < nc && !ok(j) {
			j++
		}
		// Both lists in ascending tokens, ties to the higher utility and
		// then to the new entry (which replaces an equal old one); an
		// entry is kept if it has more utility than all before it.
		last := int64(neg)
		x := 0
		for x < na && j < nc {
			if w, p := srcW[j]+ow, srcP[j]+op; w < nw[x] || (w == nw[x] && p >= np[x]) {
				if w == nw[x] && p == np[x] {
					x++
				}
				if p > last {
					last = p
					tw[n], tp[n], tpar[n], topt[n] = w, p, parBase+int32(j), k
					n++
				}
				for j++; j < nc && !ok(j); j++ {
				}
			} else {
				if p := np[x]; p > last {
					last = p
					tw[n], tp[n], tpar[n], topt[n] = nw[x], p, npar[x], nopt[x]
					n++
				}
				x++
			}
		}
		for ; x < na; x++ {
			if p := np[x]; p > last {
				last = p
				tw[n], tp[n], tpar[n], topt[n] = nw[x], p, npar[x], nopt[x]
				n++
			}
		}
		for j < nc { // j passed ok
			if p := srcP[j] + op; p > last {
				last = p
				tw[n], tp[n], tpar[n], topt[n] = srcW[j]+ow, p, parBase+int32(j), k
				n++
			}
			for j++; j < nc && !ok(j); j++ {
			}
		}
	}
	acc.w, tmp.w = tw[:n], nw
	acc.p, tmp.p = tp[:n], np
	acc.par, tmp.par = tpar[:n], npar
	acc.opt, tmp.opt = topt[:n], nopt
}

// dpGroups are the at_most groups a DP enforces exactly, with the frontier
// slots below them. A state's bucket is bits + Σ count_g·stride[g],
// count_g ≤ radix[g]−1.
type dpGroups struct {
	slots         int
	radix, stride []int32
	muK           int64 // Σ μ_g·(radix_g−1): the penalties the caller expects
	buckets       int   // 2^slots · Π radix
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

// A dpQuery asks for the best solution of a DP whose value is at least
// target.
type dpQuery struct {
	steps     []dpStep
	grp       *dpGroups
	slotGroup []int32 // per layer and frontier slot: the keeper's step, −2−g for chain segment g, or −1
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
	// gen identifies steps, grp, slotGroup and l: queries with the same
	// non-zero gen share the target-independent thresholds.
	gen uint64
}

// runDP solves max Σ(b·u − pen) subject to Σw ≤ capacity, the enforced
// exclusions and the exact groups over the steps, looking only for
// solutions whose value is at least target. It returns the canonical best
// such solution, or found == false if there is none. Values are scaled
// utilities less the penalties of relaxed groups; the exact groups cost
// nothing, but the result subtracts grp.muK, which the caller's target
// and bookkeeping (Σ μ·K over all groups) expect.
//
// stop is called before every layer with the number of states of the
// layer before; when it reports true the DP gives up.
func (m *model) runDP(q *dpQuery, stop func(states int) bool, buf *dpBuf) dpResult {
	steps, grp, l, capacity, target := q.steps, q.grp, q.l, q.capacity, q.target
	res := dpResult{bound: neg}
	n := len(steps)
	if capacity < 0 {
		return res
	}
	grid := dpGrid(l)
	L := len(grid)
	target += grp.muK
	if buf.gen != q.gen || q.gen == 0 {
		buf.thresholds(m, steps, grp, q.slotGroup, grid, l.b)
		buf.gen = q.gen
	}
	buf.base = buf.base[:0]
	for _, lam := range grid {
		buf.base = append(buf.base, target-lam*capacity)
	}
	B := grp.buckets
	bitMask := 1<<grp.slots - 1
	buf.needB = grow(buf.needB, B*L)
	thrOf := func(d int) []int64 { return buf.needB[d*L : (d+1)*L] }
	buf.bucketNeed(thrOf(0), 0, 0, grp, L)
	res.bound = q.target - slices.Max(thrOf(0))
	if res.bound < q.target {
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
	buf.log.reset()
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
				return ((b &^ int(s.own)) | int(s.omitSet)) &^ int(s.release)
			}
			if bits&int(s.forbid) != 0 || bits&int(s.needSet) != int(s.needSet) || !grp.fits(b, s.gw) {
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
					buf.bucketNeed(thrOf(d), t+1, d, grp, L)
				}
				var ow, op int64
				if o >= 0 {
					ow, op = it.opts[o].w, l.b*it.opts[o].u-(s.pen-s.gpen)
				}
				buf.acc[d].merge(&buf.tmp, grid, buf.cw[lo:hi], buf.cp[lo:hi], lo, ow, op, int32(k), thrOf(d), capacity)
			}
		}
		nx := &buf.next
		nx.w, nx.p = nx.w[:0], nx.p[:0]
		buf.noff = append(buf.noff[:0], 0)
		for d := 0; d < B; d++ {
			if touched[d] {
				a := &buf.acc[d]
				if q.beam > 0 && len(a.w) > q.beam {
					buf.prune(a, q.beam, grid, thrOf(d))
				}
				nx.w = append(nx.w, a.w...)
				nx.p = append(nx.p, a.p...)
			}
			buf.noff = append(buf.noff, int32(len(nx.w)))
		}
		if len(nx.w) == 0 {
			return res
		}
		res.states += len(nx.w)
		if q.valueOnly {
			if len(nx.w) > q.maxStates {
				res.overflow = true
				return res
			}
		} else {
			if buf.log.n+len(nx.w) > q.maxStates {
				res.overflow = true
				return res
			}
			// The back-pointers go straight from the buckets' lists
			// into the log.
			lg := buf.log.add(len(nx.w))
			for d := 0; d < B; d++ {
				if touched[d] {
					a := &buf.acc[d]
					for j, par := range a.par {
						lg[j] = dpBack{par, a.opt[j]}
					}
					lg = lg[len(a.par):]
				}
			}
		}
		buf.cw, nx.w = nx.w, buf.cw
		buf.cp, nx.p = nx.p, buf.cp
		buf.coff, buf.noff = buf.noff, buf.coff
	}
	// The best final state: the last (richest) of each bucket; ties go to
	// fewer tokens, then the lower bucket.
	s := -1
	var best int64
	for b := 0; b < B; b++ {
		hi := int(buf.coff[b+1]) - 1
		if hi < int(buf.coff[b]) {
			continue
		}
		v := buf.cp[hi]
		if s < 0 || v > best || (v == best && buf.cw[hi] < buf.cw[s]) {
			s, best = hi, v
		}
	}
	if s < 0 || best < target {
		return res
	}
	res.found = true
	res.w, res.p = buf.cw[s], best-grp.muK
	if q.valueOnly {
		return res
	}
	for t := n - 1; t >= 0; t-- {
		bk := buf.log.layers[t][s]
		k := bk.opt
		s = int(bk.par)
		if o := steps[t].opts[k]; o >= 0 {
			res.choice = append(res.choice, dpPick{steps[t].item, o})
		}
	}
	return res
}

// A dpBack is a state's back-pointer: its parent's index in the layer
// before and the index of the option that led to it.
type dpBack struct{ par, opt int32 }

// dpLog holds the back-pointers of every layer of a DP. A layer's entries
// are contiguous, in chunks that are never moved: one growing slice would
// reallocate and copy the whole log as it grows (a few MB per DP on big
// cores), and a solve runs the DP at every node. The chunks are kept for
// the next DP of the same solve.
type dpLog struct {
	chunks  [][]dpBack
	layers  [][]dpBack // per layer: its entries, in a chunk
	c, used int        // the chunk being filled and its entries in use
	n       int        // entries in all layers
}

// dpLogChunk is the size of the first chunk, in entries. Chunk c has
// dpLogChunk·2^c entries (at most 12 doublings), or the layer's if more, so
// that small DPs allocate little and big ones few chunks.
const dpLogChunk = 1 << 12

func (l *dpLog) reset() {
	l.layers = l.layers[:0]
	l.c, l.used, l.n = 0, 0, 0
}

// add returns room for the next layer's n entries.
func (l *dpLog) add(n int) []dpBack {
	for {
		if l.c == len(l.chunks) {
			l.chunks = append(l.chunks, make([]dpBack, max(dpLogChunk<<min(l.c, 12), n)))
		}
		if ch := l.chunks[l.c]; l.used+n <= len(ch) {
			s := ch[l.used : l.used+n : l.used+n]
			l.used += n
			l.n += n
			l.layers = append(l.layers, s)
			return s
		}
		if l.used == 0 {
			// An empty chunk too small for the layer (kept from an
			// earlier DP): replace it.
			l.chunks[l.c] = make([]dpBack, max(2*len(l.chunks[l.c]), n))
			continue
		}
		l.c++
		l.used = 0
	}
}

// prune keeps the beam states of a whose bounds exceed the thresholds
// thr by the most (the least slack over the grid), in order.
func (buf *dpBuf) prune(a *dpList, beam int, grid []int64, thr []int64) {
	keys := buf.keys[:0]
	i := 0
	for j, w := range a.w {
		for i+1 < len(grid) && grid[i+1]*w+thr[i+1] >= grid[i]*w+thr[i] {
			i++
		}
		keys = append(keys, a.p[j]-grid[i]*w-thr[i])
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
// common ones, plus the offsets of its set bits, less the best gains of
// the group members it still has room for.
func (buf *dpBuf) bucketNeed(thr []int64, t, d int, grp *dpGroups, L int) {
	copy(thr, buf.need[t*L:(t+1)*L])
	for i, b := range buf.base {
		thr[i] += b
	}
	for s := range grp.slots {
		if d&(1<<s) != 0 {
			row := buf.delta[(t*maxSlots+s)*L:][:L]
			for i := range thr {
				thr[i] += row[i]
			}
		}
	}
	G := len(grp.radix)
	for gi, rad := range grp.radix {
		row := buf.topsum[buf.topOff[t*G+gi]+int(rad-1-grp.count(d, gi))*L:][:L]
		for i := range thr {
			thr[i] -= row[i]
		}
	}
}

// dpGrid returns the capacity multipliers, ascending, that the DP tests
// states against: l.a times each of dpGridFactors. Each gives a valid Lagrangian
// bound. Small multipliers suit states with much room left and large ones
// states with little, so the tightest of them approximates the LP bound
// of each state's residual capacity: much tighter than one multiplier for
// states far from the break. As states run in ascending tokens, finding
// the tightest costs one comparison per state (see merge).
func dpGrid(l lagrange) []int64 {
	var grid []int64
	scale := func(a int64, factors []float64) {
		for _, f := range factors {
			hi, lo := bits.Mul64(uint64(a), uint64(math.Round(f*(1<<16))))
			g := l.aMax
			if hi>>16 == 0 {
				g = min(int64(hi<<48|lo>>16), l.aMax)
			}
			grid = append(grid, g)
		}
	}
	if !l.low {
		scale(l.a, dpGridFactors)
	} else {
		scale(l.a, dpGridLow)
		if l.lp > 0 && l.lp != l.a {
			scale(l.lp, dpGridFactors)
		}
		slices.Sort(grid)
	}
	return slices.Compact(grid)
}

// poolMembers returns, per step, the exact at_most group whose pool the
// step is in, or −1: keepers, and steps with no keeper that are in no chain.
// It reuses dst's memory.
func poolMembers(steps []dpStep, dst []int8) []int8 {
	member := slices.Grow(dst[:0], len(steps))[:len(steps)]
	for t := range steps {
		member[t] = -1
		d := &steps[t]
		if d.gw == nil || (d.bg >= 0 && !d.keeper) || d.chain >= 0 {
			continue
		}
		for gi, w := range d.gw {
			if w > 0 {
				member[t] = int8(gi)
				break
			}
		}
	}
	return member
}

// thresholds fills buf.need, buf.delta and buf.topsum, which do not depend
// on the target. need[t*L+i] + base[i] is the least P − λ_i·w a state of
// layer t (before step t) needs to reach target under grid point i when
// all its bits are clear and it has no room left in the exact groups (row
// n: the final thresholds); delta[(t*maxSlots+s)*L+i] is what a set bit s
// adds, and topsum[topOff[t*G+g]+r*L+i] the best gains of r more members
// of exact group g, which room for them subtracts. Rows run over the grid
// so that a bucket's thresholds are a few vector additions.
//
// A group's pool changes only at its members' steps, so topsum holds one
// version of a group's rows per change rather than one per layer (layers
// × groups × room rows were megabytes to write at every search node), and
// topOff points each layer at its version. (Which steps change a pool
// depends on the steps only, not on the grid point.)
//
// The bound of the remaining steps is separable by bound group: a keeper
// and the leaves counted with it contribute max(keeper, leaves) while the
// keeper is undecided and leaves only after, every other step its best
// option; a chain segment contributes the best cut of its remaining steps
// while open (a DP over them: members up to the cut, then the items
// attached after it), or its attached items' best once closed. A set bit
// means the keeper can no longer be selected (before it) or its leaves no
// longer can (after it), or the segment is closed. A member of an exact group
// that is a keeper or counted with no keeper contributes its value left
// out, and its gain goes to the group's pool: with room r, the bound adds
// the r best gains (the exact Lagrangian dual of the count). Members that
// are leaves, in a chain segment or in a second exact group are bounded as
// if the group did not exist; that only loosens the bound.
func (buf *dpBuf) thresholds(m *model, steps []dpStep, grp *dpGroups, slotGroup []int32, grid []int64, scale int64) {
	n, L, G := len(steps), len(grid), len(grp.radix)
	buf.need = growTo(buf.need, (n+1)*L)
	buf.delta = growTo(buf.delta, (n+1)*L*maxSlots)
	need, delta := buf.need, buf.delta
	buf.topOff = slices.Grow(buf.topOff[:0], (n+1)*G)[:(n+1)*G]
	// The steps run once, all grid points at each step, so that every
	// row is written whole (a pass per grid point wrote one entry of
	// every row, megabytes apart). The state of the bound is kept per
	// grid point: entry [x*L+i] is x's under grid point i.
	th := &buf.th
	th.keeper = growTo(th.keeper, n*L) // per bound group (keeper step): its best value
	th.leaves = growTo(th.leaves, n*L) // Σ best of its remaining leaves
	th.undecided = slices.Grow(th.undecided[:0], n)[:n]
	th.member = poolMembers(steps, th.member)
	for len(th.pools) < G*L {
		th.pools = append(th.pools, nil)
	}
	th.gain = growTo(th.gain, n*L) // per pool member and grid point: its gain in the pool
	th.inPool = slices.Grow(th.inPool[:0], n)[:n]
	gainOf, inPool := th.gain, th.inPool
	clear(inPool)
	keeper, leaves, undecided, member, pools := th.keeper, th.leaves, th.undecided, th.member, th.pools[:G*L]
	clear(keeper)
	clear(leaves)
	// Room for every version of topsum, counted as the loop below makes
	// them (the empty pools', then one per step that changes a pool), so
	// that adding a version never moves topsum.
	rows := 0
	for _, r := range grp.radix {
		rows += int(r)
	}
	clear(undecided)
	for t := n - 1; t >= 0; t-- {
		d := &steps[t]
		gi := int8(-1)
		switch k := d.bg; {
		case d.chain >= 0:
		case k < 0:
			gi = member[t]
		case d.keeper:
			gi = member[t]
			undecided[k] = true
		case undecided[k]:
			gi = member[k]
		}
		if gi >= 0 {
			rows += int(grp.radix[gi])
		}
	}
	buf.topsum = growTo(buf.topsum, rows*L)[:0]
	clear(undecided)
	for x := range pools {
		pools[x] = pools[x][:0]
	}
	nch := 0
	for t := range steps {
		nch = max(nch, int(steps[t].chain)+1)
	}
	th.open = growTo(th.open, nch*L)     // per segment: the bound of its remaining steps while it is open
	th.closed = growTo(th.closed, nch*L) // and once it is closed
	open, closed := th.open, th.closed
	clear(open)
	clear(closed)
	th.rest = growTo(th.rest, L) // the bound of the steps after t, less the pools
	th.all = growTo(th.all, 3*L) // step t's stepBest
	rest, all, out, sel := th.rest, th.all[:L], th.all[L:2*L], th.all[2*L:]
	clear(rest)
	th.changed = slices.Grow(th.changed[:0], G)[:G] // per group: its pools changed at this step
	th.cur = slices.Grow(th.cur[:0], G)[:G]         // per group: the offset of its current version
	changed, cur := th.changed, th.cur
	for gi := range changed {
		changed[gi] = true // the empty pools' version, at row n
	}
	// setGain sets step k's gain under grid point i in the pool of group
	// gi (inserted if k is not in it yet: the caller sets inPool[k]
	// after the grid points). A pool is its members' gains in decreasing
	// order; only the values count (topsum), so a member is found by its
	// old gain and moved by shifting the gains between its old place and
	// the new.
	setGain := func(gi int8, i int, k int32, gain int64) {
		p := pools[int(gi)*L+i]
		g := &gainOf[int(k)*L+i]
		// first returns the first index in [lo, hi) whose gain is below
		// v (or, with eq, at most v), or hi.
		first := func(lo, hi int, v int64, eq bool) int {
			return lo + sort.Search(hi-lo, func(j int) bool { return p[lo+j] < v || (eq && p[lo+j] == v) })
		}
		switch {
		case !inPool[k]:
			p = slices.Insert(p, first(0, len(p), gain, false), gain)
		case gain > *g:
			j := first(0, len(p), *g, true) // the old gain's first place
			q := first(0, j, gain, false)
			copy(p[q+1:j+1], p[q:j])
			p[q] = gain
		case gain < *g:
			j := first(0, len(p), *g, true)
			q := first(j+1, len(p), gain, true) // past the gains above the new one
			copy(p[j:q-1], p[j+1:q])
			p[q-1] = gain
		}
		*g = gain
		pools[int(gi)*L+i] = p
		changed[gi] = true
	}
	// val is bound group k's contribution outside the pools under grid
	// point i, if the keeper is undecided (und) or not.
	val := func(k int32, i int, und bool) int64 {
		switch {
		case !und:
			return leaves[int(k)*L+i]
		case member[k] >= 0:
			return leaves[int(k)*L+i] // the keeper's gain is in its pool
		}
		return max(keeper[int(k)*L+i], leaves[int(k)*L+i])
	}
	for t := n; t >= 0; t-- {
		if t < n {
			d := &steps[t]
			for i, lam := range grid {
				all[i], out[i], sel[i] = stepBest(m, d, scale, lam)
			}
			switch k := d.bg; {
			case d.chain >= 0:
				g := int(d.chain) * L
				for i := range grid {
					o, c := chainStep(d, open[g+i], closed[g+i], all[i], out[i], sel[i])
					rest[i] += o - open[g+i]
					open[g+i], closed[g+i] = o, c
				}
			case k < 0 && member[t] >= 0:
				gi := member[t]
				for i := range grid {
					rest[i] += out[i]
					setGain(gi, i, int32(t), all[i]-out[i])
				}
				inPool[t] = true
			case k < 0:
				for i := range grid {
					rest[i] += all[i]
				}
			case d.keeper:
				und := undecided[k]
				undecided[k] = true
				for i := range grid {
					old := val(k, i, und)
					keeper[int(k)*L+i] = all[i]
					rest[i] += val(k, i, true) - old
					if gi := member[t]; gi >= 0 {
						setGain(gi, i, k, all[i]-leaves[int(k)*L+i])
					}
				}
				if member[t] >= 0 {
					inPool[k] = true
				}
			default:
				und := undecided[k]
				for i := range grid {
					old := val(k, i, und)
					leaves[int(k)*L+i] += all[i]
					rest[i] += val(k, i, und) - old
					if gi := member[k]; und && gi >= 0 {
						setGain(gi, i, k, keeper[int(k)*L+i]-leaves[int(k)*L+i])
					}
				}
				if member[k] >= 0 && und {
					inPool[k] = true
				}
			}
		}
		row := need[t*L:][:L]
		for i := range row {
			row[i] = -rest[i]
		}
		for s := range maxSlots {
			row := delta[(t*maxSlots+s)*L:][:L]
			switch k := int(slotGroup[t*maxSlots+s]); {
			case k <= -2:
				g := (-2 - k) * L
				for i := range row {
					row[i] = open[g+i] - closed[g+i] // the segment is closed
				}
			case k < 0:
				clear(row)
			case !undecided[k]:
				copy(row, leaves[k*L:][:L])
			case member[k] < 0:
				for i := range row {
					row[i] = max(keeper[k*L+i], leaves[k*L+i]) - leaves[k*L+i]
				}
			default:
				clear(row)
			}
		}
		for gi, rad := range grp.radix {
			if changed[gi] {
				// A new version of the group's rows.
				changed[gi] = false
				cur[gi] = len(buf.topsum)
				buf.topsum = buf.topsum[:len(buf.topsum)+int(rad)*L]
				topsum := buf.topsum[cur[gi]:]
				for i := range grid {
					p := pools[gi*L+i]
					sum := int64(0)
					topsum[i] = 0
					for r := 1; r < int(rad); r++ {
						if r <= len(p) && p[r-1] > 0 {
							sum += p[r-1]
						}
						topsum[r*L+i] = sum
					}
				}
			}
			buf.topOff[t*G+gi] = cur[gi]
		}
	}
}

// stepBest returns step d's best value under multiplier lam, its value
// left out (0, or the best if it must be selected: no gain to choose) and
// its best selected value.
func stepBest(m *model, d *dpStep, scale, lam int64) (all, out, sel int64) {
	all, out, sel = neg, neg, neg
	for _, o := range d.opts {
		if o < 0 {
			out = 0
			all = max(all, 0)
			continue
		}
		op := m.items[d.item].opts[o]
		v := scale*op.u - lam*op.w - (d.pen - d.gpen)
		sel = max(sel, v)
		all = max(all, v)
	}
	if out == neg {
		out = all
	}
	return all, out, sel
}

// chainStep extends the bound of a segment's remaining steps (o while it
// is open, c once it is closed) by step d, whose values are all, out and
// sel (stepBest). A member keeps the segment open only if selected and is
// left out once it is closed; an attached item is left out while it is
// open. (A member that must be selected counts its best value once
// closed, where no pack has it: a looser bound, never a wrong one.)
func chainStep(d *dpStep, o, c, all, out, sel int64) (int64, int64) {
	if d.attached {
		return o + out, c + all
	}
	no := sel + o
	if d.opts[0] < 0 {
		no = max(no, c)
	}
	return no, c + out
}

func grow(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// growTo and growTo32 return s with length n, growing its capacity by at
// least half when it must grow (the lists of a DP grow layer by layer).
func growTo(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n, max(n, cap(s)+cap(s)/2))
	}
	return s[:n]
}

func growTo32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, max(n, cap(s)+cap(s)/2))
	}
	return s[:n]
}

// dpGridFactors are the grid's multipliers relative to l.a: 2^(k/12) for
// k = −12…12, from half to twice the LP multiplier. (Measured on the
// hard-mix set: a wider grid (¼…4, 49 points) prunes no better and costs
// twice the thresholds.)
//
// dpGridLow adds 0, 1/64, 1/16 and 1/4, for problems with chains: once a
// chain is closed, its state has room that only the items after the cut
// can use (summaries, small next to the raws), which a multiplier near
// the whole problem's prices far too high. (Measured on the window mix,
// 2,048 units at 300k: 13× less work; elsewhere it only costs the
// thresholds, 3–12% more work, so it is not used there.) With chains the
// grid also spans the LP's multiplier (l.lp, dpGridFactors around it)
// when tuning moved l.a away from it: it prices the trades between
// summaries' representations, which fixing needs once the cut is decided
// (window mix, 10,000 units at 300k: 7× fewer DP states).
var dpGridFactors, dpGridLow = func() ([]float64, []float64) {
	var g []float64
	for k := -12; k <= 12; k++ {
		g = append(g, math.Exp2(float64(k)/12))
	}
	return g, append([]float64{0, 1.0 / 64, 1.0 / 16, 1.0 / 4}, g...)
}()
