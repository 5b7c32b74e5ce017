package solver

import (
	"cmp"
	"math"
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
// Chains. The members of a chain of requires (model.go) that the node
// leaves undecided are a run whose newer neighbour is selected, so the
// selected ones are a prefix of the run: a cut. One frontier slot
// enforces that exactly: its bit says the run is closed (a member was
// left out), and no member is selected after. The exclusions of an item
// with a member are then implied by its exclusion with the newest member
// it excludes, which every older one requires; an item that excludes only
// members of one run (a warm summary of a window's raws) is attached to
// that newest member, laid out right after it, and selected only once
// the run is closed. So a contiguous window with its summaries costs one
// bit instead of a branch per link and a star per summary, and the bound
// of the run's remaining steps (the best cut, thresholds in dp.go) is
// exact for the run.
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
	out, fw, fp, ok, chained := sv.buildSteps(status, sel, pen, dst, true)
	if ok && !chained {
		// A chain found no free frontier slot: build the DP again with
		// the chains relaxed (the search branches on their links).
		out, fw, fp, ok, _ = sv.buildSteps(status, sel, pen, out, false)
	}
	return out, fw, fp, ok
}

// buildSteps is steps, enforcing the chains if chains is set; chained
// reports false if a chain found no frontier slot (the steps are then
// unusable).
func (sv *solver) buildSteps(status []int8, sel []int32, pen []int64, dst []dpStep, chains bool) (_ []dpStep, fw, fp int64, ok, chained bool) {
	m := sv.m
	dst = dst[:0]
	inDP := sv.inDP[:0]
	for i := range m.items {
		a := restrict(sv.alive[i], status[i])
		switch len(a) {
		case 0:
			return dst, 0, 0, false, true
		case 1:
			sel[i] = a[0]
			if a[0] >= 0 {
				fw += m.items[i].opts[a[0]].w
				fp += sv.l.b*m.items[i].opts[a[0]].u - pen[i]
			}
			inDP = append(inDP, -1)
		default:
			inDP = append(inDP, int32(len(dst)))
			dst = append(dst, dpStep{item: int32(i), opts: a, pen: pen[i], bg: -1, chain: -1})
		}
	}
	sv.inDP = inDP
	value := sv.bestValue

	// Chain segments: runs of a chain's members in the DP, newest first,
	// whose newer neighbour is fixed in (or absent), so that the run starts
	// open. (Propagation makes every run but the first start so; the others
	// are left to the search.)
	seg := make([]int32, len(dst)) // per step: its segment, or −1
	segPos := make([]int32, len(dst))
	for k := range seg {
		seg[k] = -1
	}
	var segs [][]int32
	if chains {
		for _, c := range m.chains {
			var run []int32
			flush := func() {
				if len(run) >= 2 {
					for p, k := range run {
						seg[k], segPos[k] = int32(len(segs)), int32(p)
					}
					segs = append(segs, run)
				}
				run = nil
			}
			for p, it := range c.members {
				k := inDP[it]
				if k < 0 {
					flush()
					continue
				}
				if run == nil && p > 0 && (inDP[c.members[p-1]] >= 0 || sel[c.members[p-1]] < 0) {
					continue
				}
				run = append(run, k)
			}
			flush()
		}
	}

	// Exclusion edges inside the DP. With a segment enforced, an edge
	// from k to a member l is implied when k also excludes a newer member
	// of that segment (l requires it, so l is out whenever k is in), and
	// is dropped. An item all of whose edges go to one segment is
	// attached to the newest member it excludes: it is laid out right
	// after it and needs the segment closed there (see frontier). The
	// other edges are ordinary: keepers and frontier slots.
	newest := func(k int32, g int32) int32 { // k's newest partner in segment g
		best := int32(-1)
		for _, j := range m.excl[dst[k].item] {
			if l := inDP[j]; l >= 0 && seg[l] == g && (best < 0 || segPos[l] < segPos[best]) {
				best = l
			}
		}
		return best
	}
	attachedTo := make([]int32, len(dst))
	for k := range dst {
		attachedTo[k] = -1
		if len(segs) == 0 || seg[k] >= 0 {
			continue
		}
		g := int32(-2)
		for _, j := range m.excl[dst[k].item] {
			if l := inDP[j]; l >= 0 {
				switch {
				case g == -2:
					g = seg[l]
				case g != seg[l]:
					g = -1
				}
			}
		}
		if g >= 0 {
			attachedTo[k] = newest(int32(k), g)
		}
	}
	adj := make([][]int32, len(dst)) // ordinary partners, by step
	for k := range dst {
		for _, j := range m.excl[dst[k].item] {
			l := inDP[j]
			switch {
			case l < 0 || attachedTo[k] >= 0 || attachedTo[l] >= 0:
				continue
			case seg[l] >= 0 && seg[l] != seg[k] && newest(int32(k), seg[l]) != l:
				continue
			case seg[k] >= 0 && seg[k] != seg[l] && newest(l, seg[k]) != int32(k):
				continue
			}
			adj[k] = append(adj[k], l)
		}
	}
	deg := func(k int32) int { return len(adj[k]) }
	keeps := func(k, l int32) bool { // k keeps the edge to l
		return deg(k) > deg(l) || (deg(k) == deg(l) && k > l)
	}
	isKeeper := func(k int32) bool {
		for _, l := range adj[k] {
			if keeps(k, l) {
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
	union := func(k, l int32) {
		if a, b := find(k), find(l); a != b {
			uf[max(a, b)] = min(a, b)
		}
	}
	attached := make([][]int32, len(dst)) // per member: the steps attached to it
	for k := range dst {
		for _, l := range adj[k] {
			union(int32(k), l)
		}
		if e := attachedTo[k]; e >= 0 {
			union(int32(k), e)
			attached[e] = append(attached[e], int32(k))
		}
	}
	for _, run := range segs {
		for _, k := range run[1:] {
			union(run[0], k)
		}
	}

	// Units: single items and clusters. A cluster is laid out keeper by
	// keeper (oldest first), every keeper after its leaves not yet laid
	// out; each leaf joins the bound group of the first keeper that lays
	// it out. Then the rest of its items but its segments, then each
	// segment, members newest first, each followed by the items attached
	// to it. Chain members and attached items are bounded with their
	// segment (thresholds), in no bound group. A unit's regret is how much
	// its best choice beats the next (for a cluster, the closest
	// keeper-versus-leaves decision). A cluster with a segment goes
	// first, although its cut is the least certain choice: the bound of
	// what follows a cut (summaries' representations, separable) is
	// tight, while the bound of a cut still to come is not (its tokens
	// jump by whole exchanges), so the states are best pruned by the
	// first. (Window mix, 2,048 units at 300k: 44% less work than last.)
	type unit struct {
		regret int64
		items  []int32 // cluster: its steps, ascending
		order  []int32
	}
	var units []unit
	cluster := make(map[int32]int)
	for k := range dst {
		r := find(int32(k))
		if deg(int32(k)) == 0 && seg[k] < 0 && attachedTo[k] < 0 {
			units = append(units, unit{regret: sv.optRegret(&dst[k]), order: []int32{int32(k)}})
			continue
		}
		if _, ok := cluster[r]; !ok {
			cluster[r] = len(units)
			units = append(units, unit{regret: int64(1) << 62})
		}
		u := &units[cluster[r]]
		u.items = append(u.items, int32(k))
	}
	placed := make([]bool, len(dst))
	free := func(k int32) bool { return !placed[k] && seg[k] < 0 && attachedTo[k] < 0 }
	for ui := range units {
		u := &units[ui]
		for _, k := range u.items {
			if !free(k) || !isKeeper(k) {
				continue
			}
			g := k // bound group id: the keeper's step index
			var leaves int64
			from := len(u.order)
			for _, l := range adj[k] {
				if keeps(k, l) && free(l) && !isKeeper(l) {
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
			u.order = append(u.order, k)
			u.regret = min(u.regret, abs(value(&dst[k])-leaves))
		}
		for _, k := range u.items {
			if free(k) {
				placed[k] = true
				u.order = append(u.order, k)
			}
		}
	}
	for g, run := range segs {
		u := &units[cluster[find(run[0])]]
		u.regret = math.MaxInt64
		for _, k := range run {
			dst[k].chain = int32(g)
			u.order = append(u.order, k)
			for _, a := range attached[k] {
				dst[a].chain, dst[a].attached = int32(g), true
				u.order = append(u.order, a)
			}
		}
	}
	sv.boundGroups(dst, adj, keeps)
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
		for _, l := range adj[k] {
			if keeps(int32(k), l) {
				edges = append(edges, edge{pos[k], pos[l]})
			}
		}
	}
	spans := make([][2]int32, len(segs)) // per segment: its first and last step
	for g, run := range segs {
		spans[g] = [2]int32{pos[run[0]], pos[run[0]]}
	}
	for t := range out {
		if g := out[t].chain; g >= 0 {
			spans[g][1] = max(spans[g][1], int32(t))
		}
	}
	for i := range inDP {
		if inDP[i] >= 0 {
			inDP[i] = pos[inDP[i]]
		}
	}
	slots, chained := sv.frontier(out, edges, spans)
	if !chained {
		return out, fw, fp, true, false
	}
	sv.exactGroups(out, sel, slots)
	sv.gen++
	return out, fw, fp, true, true
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
func (sv *solver) boundGroups(dst []dpStep, adj [][]int32, keeps func(k, l int32) bool) {
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
		for _, k := range adj[l] {
			if dst[k].keeper && keeps(k, int32(l)) && gain[k] > gain[best] {
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

// frontier assigns frontier slots to the segments (spans: first and last
// step) and the keepers of edges (in step order, lowest free slot first,
// segments before keepers; a keeper finding none is relaxed) and sets each
// step's bit masks and sv.slotGroup. It returns the number of slots used,
// and false if a segment found no slot.
//
// A segment's bit says it is closed: a member is not selected while it is
// set, and omitting a member sets it; an attached item is not selected
// while it is clear, that is while the member it follows, which it
// excludes, is selected.
func (sv *solver) frontier(steps []dpStep, edges []edge, spans [][2]int32) (int, bool) {
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
	// Interval colouring in step order. An owner is a keeper step k ≥ 0
	// or a segment g as −2−g.
	slot := make([]int8, n)
	segSlot := make([]int8, len(spans))
	var owner [maxSlots]int32 // live owner of each slot, or -1
	for s := range owner {
		owner[s] = -1
	}
	starts := make([][]int32, n) // owners whose interval starts at t
	for g, sp := range spans {
		starts[sp[0]] = append(starts[sp[0]], -2-int32(g))
	}
	for k := range steps {
		slot[k] = -1
		if first[k] >= 0 {
			starts[first[k]] = append(starts[first[k]], int32(k))
		}
	}
	end := func(o int32) int32 {
		if o <= -2 {
			return spans[-2-o][1]
		}
		return last[o]
	}
	used := 0
	if cap(sv.slotGroup) < (n+1)*maxSlots {
		sv.slotGroup = make([]int32, (n+1)*maxSlots)
	}
	sv.slotGroup = sv.slotGroup[:(n+1)*maxSlots]
	for t := 0; t < n; t++ {
		for _, o := range starts[t] {
			found := false
			for s := range owner {
				if owner[s] == -1 {
					owner[s], found = o, true
					if o <= -2 {
						segSlot[-2-o] = int8(s)
					} else {
						slot[o] = int8(s)
					}
					used = max(used, s+1)
					break
				}
			}
			if !found && o <= -2 {
				return used, false
			}
		}
		// Layer t+1 (after step t): the slots still live.
		for s := range owner {
			if o := owner[s]; o != -1 && end(o) <= int32(t) {
				owner[s] = -1
			}
		}
		for s := range maxSlots {
			g := int32(-1)
			switch o := owner[s]; {
			case o <= -2:
				g = o
			case o >= 0:
				g = steps[o].bg
			}
			sv.slotGroup[(t+1)*maxSlots+s] = g
		}
	}
	for s := range maxSlots {
		sv.slotGroup[s] = -1
	}
	for t := range steps {
		st := &steps[t]
		st.forbid, st.set, st.own, st.release, st.omitSet, st.needSet = 0, 0, 0, 0, 0, 0
		if s := slot[t]; s >= 0 {
			st.own = 1 << s
			st.forbid |= 1 << s
		}
		if g := st.chain; g >= 0 {
			bit := uint8(1) << segSlot[g]
			if st.attached {
				st.needSet |= bit
			} else {
				st.forbid |= bit
				st.omitSet |= bit
			}
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
	for g, sp := range spans {
		steps[sp[1]].release |= 1 << segSlot[g]
	}
	return used, true
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
