package solver

import (
	"cmp"
	"slices"
)

// Building the DP of a search node: which items it decides, in which
// order, and which side constraints it enforces exactly.
//
// Exclusions. Every excludes edge between two items of the DP has a
// keeper, the endpoint with more exclusion partners (a summary rather
// than a raw message it covers). While some of a keeper's closed
// neighbourhood is decided and some is not, the keeper holds a bit of the
// state's bucket (a frontier slot): before the keeper is decided, whether
// any of its leaves was selected; after, whether the keeper was. A leaf is
// not selected while a keeper it excludes has its bit set, nor a keeper
// while its own bit is set. A cluster of exclusions (a summary and the
// raws it covers, chains of them linked by tool pairs that straddle two
// summaries' ranges) is laid out keeper by keeper, each keeper after its
// leaves, so that at most a couple of bits are live at once. A keeper that
// finds no free slot is relaxed: the search branches on its edges.
//
// Groups. at_most groups the node's fixed items and the DP could overfill
// are enforced by counting selected members in the bucket too, smallest
// bound first while the buckets stay within maxBuckets; the rest are
// relaxed through their multipliers.

// Limits on the buckets of one DP.
const (
	maxSlots   = 3
	maxBuckets = 1024
)

// steps builds the DP over the items that still have a choice under
// status, writing the fixed items' options into sel and returning their
// tokens and scaled penalised utility (pen: per-item group penalties). It
// sets sv.grp and sv.exact. It reports false if some item has no option
// left (the node holds no pack reaching the incumbent).
func (sv *solver) steps(status []int8, sel []int32, pen []int64, dst []dpStep) ([]dpStep, int64, int64, bool) {
	m := sv.m
	dst = dst[:0]
	var fw, fp int64
	inDP := sv.inDP[:0]
	for i := range m.items {
		a := restrict(sv.alive[i], status[i])
		switch len(a) {
		case 0:
			return dst, 0, 0, false
		case 1:
			sel[i] = a[0]
			if a[0] >= 0 {
				fw += m.items[i].opts[a[0]].w
				fp += sv.l.b*m.items[i].opts[a[0]].u - pen[i]
			}
			inDP = append(inDP, -1)
		default:
			inDP = append(inDP, int32(len(dst)))
			dst = append(dst, dpStep{item: int32(i), opts: a, pen: pen[i], bg: -1})
		}
	}
	sv.inDP = inDP
	value := sv.bestValue

	// Exclusion edges inside the DP, their keepers and clusters.
	deg := make([]int32, len(dst))
	partners := func(k int) []int32 { return m.excl[dst[k].item] }
	for k := range dst {
		for _, j := range partners(k) {
			if inDP[j] >= 0 {
				deg[k]++
			}
		}
	}
	keeps := func(k, l int32) bool { // k keeps the edge to l
		return deg[k] > deg[l] || (deg[k] == deg[l] && k > l)
	}
	isKeeper := func(k int) bool {
		for _, j := range partners(k) {
			if l := inDP[j]; l >= 0 && keeps(int32(k), l) {
				return true
			}
		}
		return false
	}
	uf := make([]int32, len(dst))
	for k := range uf {
		uf[k] = int32(k)
	}
	find := func(x int32) int32 {
		for uf[x] != x {
			uf[x] = uf[uf[x]]
			x = uf[x]
		}
		return x
	}
	for k := range dst {
		for _, j := range partners(k) {
			if l := inDP[j]; l >= 0 {
				a, b := find(int32(k)), find(l)
				if a != b {
					uf[max(a, b)] = min(a, b)
				}
			}
		}
	}

	// Units: single items and clusters, each laid out keeper by keeper
	// (oldest first), every keeper after its leaves not yet laid out; each
	// leaf joins the bound group of the first keeper that lays it out. A
	// unit's regret is how much its best choice beats the next (for a
	// cluster, the closest keeper-versus-leaves decision).
	type unit struct {
		regret int64
		order  []int32
	}
	var units []unit
	cluster := make(map[int32]int)
	placed := make([]bool, len(dst))
	for k := range dst {
		r := find(int32(k))
		if deg[k] == 0 {
			units = append(units, unit{regret: sv.optRegret(&dst[k]), order: []int32{int32(k)}})
			continue
		}
		if _, ok := cluster[r]; !ok {
			cluster[r] = len(units)
			units = append(units, unit{regret: int64(1) << 62})
		}
		u := &units[cluster[r]]
		if !isKeeper(k) {
			continue
		}
		g := int32(k) // bound group id: the keeper's step index
		var leaves int64
		from := len(u.order)
		for _, j := range partners(k) {
			if l := inDP[j]; l >= 0 && keeps(int32(k), l) && !placed[l] && !isKeeper(int(l)) {
				placed[l] = true
				dst[l].bg = g
				u.order = append(u.order, l)
				leaves += value(&dst[l])
			}
		}
		// Certain leaves first, as for units.
		slices.SortStableFunc(u.order[from:], func(x, y int32) int {
			return cmp.Compare(sv.optRegret(&dst[y]), sv.optRegret(&dst[x]))
		})
		placed[k] = true
		dst[k].bg, dst[k].keeper = g, true
		u.order = append(u.order, int32(k))
		u.regret = min(u.regret, abs(value(&dst[k])-leaves))
	}
	sv.boundGroups(dst, inDP, keeps)
	// Most certain units first: their alternatives die at once, so the
	// state lists stay short until the uncertain units at the end.
	slices.SortStableFunc(units, func(x, y unit) int { return cmp.Compare(y.regret, x.regret) })
	out := sv.stepsTmp[:0]
	pos := make([]int32, len(dst)) // old step index -> new
	for _, u := range units {
		for _, k := range u.order {
			pos[k] = int32(len(out))
			out = append(out, dst[k])
		}
	}
	for t := range out {
		if out[t].bg >= 0 {
			out[t].bg = pos[out[t].bg]
		}
	}
	sv.stepsTmp = dst
	var edges []edge
	for k := range dst {
		for _, j := range partners(k) {
			if l := inDP[j]; l >= 0 && keeps(int32(k), l) {
				edges = append(edges, edge{pos[k], pos[l]})
			}
		}
	}
	for i := range inDP {
		if inDP[i] >= 0 {
			inDP[i] = pos[inDP[i]]
		}
	}
	slots := sv.frontier(out, edges)
	sv.exactGroups(out, sel, slots)
	sv.gen++
	return out, fw, fp, true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// boundGroups reassigns each leaf excluded by several keepers to the bound
// group of the keeper that gains most over its other leaves. Any
// assignment gives a valid bound (a leaf's value counted in one keeper's
// max(keeper, leaves) and its other exclusions relaxed), but counting it
// where the keeper is the likelier choice drops it from the bound, which
// is then tighter: on the full mix, by about the value of four messages.
func (sv *solver) boundGroups(dst []dpStep, inDP []int32, keeps func(k, l int32) bool) {
	m := sv.m
	value := sv.bestValue
	gain := make(map[int32]int64)
	for l := range dst {
		if k := dst[l].bg; k >= 0 && !dst[l].keeper {
			gain[k] -= value(&dst[l])
		}
	}
	for k := range dst {
		if dst[k].keeper {
			gain[int32(k)] += value(&dst[k])
		}
	}
	for l := range dst {
		d := &dst[l]
		if d.bg < 0 || d.keeper {
			continue
		}
		best := d.bg
		for _, j := range m.excl[d.item] {
			if k := inDP[j]; k >= 0 && dst[k].keeper && keeps(k, int32(l)) && gain[k] > gain[best] {
				best = k
			}
		}
		d.bg = best
	}
}

// bestValue is step d's best option value (omission is 0) under the
// root multipliers.
func (sv *solver) bestValue(d *dpStep) int64 {
	b := int64(neg)
	for _, o := range d.opts {
		v := int64(0)
		if o >= 0 {
			op := sv.m.items[d.item].opts[o]
			v = sv.l.val(op.w, op.u) - d.pen
		}
		b = max(b, v)
	}
	return b
}

// optRegret is how much the best option of a single item beats its
// second best under the multipliers.
func (sv *solver) optRegret(d *dpStep) int64 {
	b1, b2 := int64(neg), int64(neg)
	for _, o := range d.opts {
		v := int64(0)
		if o >= 0 {
			op := sv.m.items[d.item].opts[o]
			v = sv.l.val(op.w, op.u) - d.pen
		}
		if v > b1 {
			b1, b2 = v, b1
		} else if v > b2 {
			b2 = v
		}
	}
	return b1 - b2
}

// An edge is an exclusion between two DP steps, by step index.
type edge struct{ keeper, leaf int32 }

// frontier assigns frontier slots to the keepers of edges (in step order,
// lowest free slot first; a keeper finding none is relaxed) and sets each
// step's bit masks and sv.slotGroup. It returns the number of slots used.
func (sv *solver) frontier(steps []dpStep, edges []edge) int {
	n := len(steps)
	first := make([]int32, n) // per keeper step: first and last step of its closed neighbourhood
	last := make([]int32, n)
	for t := range steps {
		first[t], last[t] = -1, -1
	}
	for _, e := range edges {
		for _, x := range []int32{e.keeper, e.leaf} {
			if first[e.keeper] < 0 || x < first[e.keeper] {
				first[e.keeper] = x
			}
			last[e.keeper] = max(last[e.keeper], x)
		}
	}
	// Interval colouring in step order.
	slot := make([]int8, n)
	var owner [maxSlots]int32 // live keeper of each slot, or -1
	for s := range owner {
		owner[s] = -1
	}
	starts := make([][]int32, n) // keepers whose neighbourhood starts at t
	for k := range steps {
		slot[k] = -1
		if first[k] >= 0 {
			starts[first[k]] = append(starts[first[k]], int32(k))
		}
	}
	used := 0
	if cap(sv.slotGroup) < (n+1)*maxSlots {
		sv.slotGroup = make([]int32, (n+1)*maxSlots)
	}
	sv.slotGroup = sv.slotGroup[:(n+1)*maxSlots]
	for t := 0; t < n; t++ {
		for _, k := range starts[t] {
			for s := range owner {
				if owner[s] < 0 {
					owner[s], slot[k] = k, int8(s)
					used = max(used, s+1)
					break
				}
			}
		}
		// Layer t+1 (after step t): the slots still live.
		for s := range owner {
			if k := owner[s]; k >= 0 && last[k] <= int32(t) {
				owner[s] = -1
			}
		}
		for s := range maxSlots {
			g := int32(-1)
			if k := owner[s]; k >= 0 {
				g = steps[k].bg
			}
			sv.slotGroup[(t+1)*maxSlots+s] = g
		}
	}
	for s := range maxSlots {
		sv.slotGroup[s] = -1
	}
	for t := range steps {
		st := &steps[t]
		st.forbid, st.set, st.own, st.release = 0, 0, 0, 0
		if s := slot[t]; s >= 0 {
			st.own = 1 << s
			st.forbid |= 1 << s
		}
	}
	for _, e := range edges {
		s := slot[e.keeper]
		if s < 0 {
			continue
		}
		if e.leaf < e.keeper {
			steps[e.leaf].set |= 1 << s
		} else {
			steps[e.leaf].forbid |= 1 << s
		}
	}
	for k := range steps {
		if s := slot[k]; s >= 0 {
			steps[last[k]].release |= 1 << s
		}
	}
	return used
}

// exactGroups chooses the at_most groups the DP over steps enforces
// exactly (smallest remaining bound first, while the buckets stay within
// maxBuckets given 2^slots bit patterns), records them in sv.grp and
// sv.exact, and sets the steps' group weights. Groups the fixed items
// (sel) and the steps cannot overfill are dropped; the others stay
// relaxed by their multipliers.
func (sv *solver) exactGroups(steps []dpStep, sel []int32, slots int) {
	m := sv.m
	type cand struct{ g, room int }
	var cands []cand
	// in reports whether item it is selected whatever the DP decides:
	// fixed in, or in the DP with no omission left.
	in := func(it int32) bool {
		if t := sv.inDP[it]; t >= 0 {
			return steps[t].opts[0] >= 0
		}
		return sel[it] >= 0
	}
	for gi, g := range m.groups {
		room, free := int32(g.k), int32(0)
		for k, it := range g.members {
			switch {
			case in(it):
				room -= g.weights[k]
			case sv.inDP[it] >= 0:
				free += g.weights[k]
			}
		}
		if free > room && room >= 0 {
			cands = append(cands, cand{gi, int(room)})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(a.room, b.room) })
	sv.grp = dpGroups{slots: slots, buckets: 1 << slots}
	clear(sv.exact)
	var chosen []int
	stride := int32(1) << slots
	for _, c := range cands {
		if sv.grp.buckets*(c.room+1) > maxBuckets {
			continue
		}
		sv.grp.radix = append(sv.grp.radix, int32(c.room+1))
		sv.grp.stride = append(sv.grp.stride, stride)
		sv.grp.muK += sv.nodeMu[c.g] * int64(c.room)
		sv.grp.buckets *= c.room + 1
		stride *= int32(c.room + 1)
		sv.exact[c.g] = true
		chosen = append(chosen, c.g)
	}
	for t := range steps {
		d := &steps[t]
		d.gw, d.delta, d.gpen = nil, 0, 0
		if d.opts[0] >= 0 {
			continue // counted in the room already
		}
		for ei, gi := range chosen {
			g := &m.groups[gi]
			if k := slices.Index(g.members, d.item); k >= 0 {
				if d.gw == nil {
					d.gw = make([]int32, len(chosen))
				}
				d.gw[ei] = g.weights[k]
				d.delta += g.weights[k] * sv.grp.stride[ei]
				d.gpen += sv.nodeMu[gi] * int64(g.weights[k])
			}
		}
	}
}
