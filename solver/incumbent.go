package solver

// Incumbents: the greedy packs (LP greedy, newest-first, star-mode
// Lagrangian greedy) and the beam DP that improves them.

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
	widen := 1                 // after a round that finds nothing better, one more 4× wider
	for range maxImprove + 1 { // + the wider retry
		pen, muK := m.penalties(sv.mu, nil)
		sv.nodeMu = sv.mu
		var fw, fp int64
		var ok bool
		steps, fw, fp, ok = sv.steps(sv.root, sel, pen, steps)
		if !ok || len(steps) == 0 {
			return
		}
		q := dpQuery{steps: steps, grp: &sv.grp, slotGroup: sv.slotGroup, gen: sv.gen, capacity: m.capacity - fw,
			target: sv.l.b*(sv.bestU+1) - fp - muK, l: sv.l, maxStates: sv.o.MaxStates, beam: widen * beamFor(len(steps))}
		res := m.runDP(&q, sv.stop, &sv.buf)
		sv.stats.States += res.states
		if !res.found {
			if widen > 1 {
				return
			}
			widen = 4
			continue
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
		widen = 1
		sv.dpFix()
	}
}

// beamFor is the beam width for a core of n steps: narrow on big cores,
// where a wide beam costs most and fixing has not yet had a good
// incumbent, wider once fixing has shrunk the core.
func beamFor(n int) int {
	return max(4, min(64, beamWidth*256/max(n, 1)))
}

// builder grows a feasible item-level choice greedily.
type builder struct {
	m      *model
	s      *searchState
	sel    []int32 // option per item; −1 omitted (or not yet chosen)
	w, u   int64
	newIns []int32
}

func newBuilder(m *model) *builder {
	b := &builder{m: m, s: newSearchState(m), sel: make([]int32, len(m.items))}
	for i := range b.sel {
		b.sel[i] = -1
	}
	for i, st := range m.root {
		if st == stIn {
			b.sel[i] = 0
			b.w += m.items[i].opts[0].w
			b.u += m.items[i].opts[0].u
		}
	}
	return b
}

// add selects free item i with option o, together with everything
// propagation forces in (at their lightest options). It reports
// whether it could do so within capacity; otherwise nothing changes.
func (b *builder) add(i int32, o int32) bool {
	if b.s.status[i] != stFree {
		return false
	}
	mark := len(b.s.trail)
	if !b.s.set(i, stIn) {
		b.s.undo(mark)
		return false
	}
	var dw, du int64
	for _, j := range b.s.trail[mark:] {
		if b.s.status[j] == stIn && j != i {
			dw += b.m.items[j].opts[0].w
			du += b.m.items[j].opts[0].u
		}
	}
	room := b.m.capacity - b.w - dw
	opts := b.m.items[i].opts
	if opts[o].w > room {
		b.s.undo(mark)
		return false
	}
	for _, j := range b.s.trail[mark:] {
		if b.s.status[j] == stIn {
			b.sel[j] = 0
		}
	}
	b.sel[i] = o
	b.w += dw + opts[o].w
	b.u += du + opts[o].u
	return true
}

// upgrade switches selected item i to option o if it fits.
func (b *builder) upgrade(i, o int32) bool {
	cur := b.m.items[i].opts[b.sel[i]]
	next := b.m.items[i].opts[o]
	if b.w-cur.w+next.w > b.m.capacity {
		return false
	}
	b.w += next.w - cur.w
	b.u += next.u - cur.u
	b.sel[i] = o
	return true
}

// fill walks hull segments in greedy order, taking each that still applies
// and fits.
func (b *builder) fill(segs []segment) {
	for _, s := range segs {
		i := s.item
		switch {
		case s.from == -1 && b.s.status[i] == stFree:
			b.add(i, s.to)
		case s.from >= 0 && b.sel[i] == s.from && b.s.status[i] == stIn:
			b.upgrade(i, s.to)
		}
	}
}

// newestFirst takes items newest first, each with its richest option that
// fits.
func (b *builder) newestFirst() {
	for i := len(b.m.items) - 1; i >= 0; i-- {
		opts := b.m.items[i].opts
		switch b.s.status[i] {
		case stFree:
			for o := len(opts) - 1; o >= 0; o-- {
				if opts[o].w <= b.m.capacity-b.w && b.add(int32(i), int32(o)) {
					break
				}
			}
		case stIn:
			for o := len(opts) - 1; o > int(b.sel[i]); o-- {
				if b.upgrade(int32(i), int32(o)) {
					break
				}
			}
		}
	}
}

// repair builds a feasible choice close to the relaxed choice rel: it adds
// rel's selected items newest first, then fills greedily.
func (b *builder) repair(rel []int32, segs []segment) {
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] < 0 {
			continue
		}
		switch b.s.status[i] {
		case stFree:
			for o := rel[i]; o >= 0 && !b.add(int32(i), o); o-- {
			}
		case stIn:
			if rel[i] > b.sel[i] {
				b.upgrade(int32(i), rel[i])
			}
		}
	}
	b.fill(segs)
}
