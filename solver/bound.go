package solver

import (
	"math/bits"
	"slices"
)

// The Lagrangian bound. For any λ ≥ 0,
//
//	OPT ≤ λ·C + Σ_items max_o (u_o − λ·w_o)
//
// because every feasible pack has Σ w ≤ C. All constraints other than the
// capacity are relaxed, so the bound holds for the whole problem and for
// every search node. λ is kept as a/b with b a power of two chosen so that
// every scaled sum fits in int64; any a gives a valid bound, and a is the
// LP-optimal slope (the efficiency of the LP break segment) rounded down.
type lagrange struct {
	a, b int64
	aMax int64 // largest a for which a·C fits comfortably
}

// scaled returns b·u − a·w.
func (l lagrange) val(w, u int64) int64 { return l.b*u - l.a*w }

// newLagrange returns b for the model's magnitudes with a = 0.
func newLagrange(m *model) lagrange {
	k := 60 - bits.Len64(uint64(m.totalMax)+1) - 1
	k = min(max(k, 0), 24)
	return lagrange{b: 1 << k, aMax: int64(1) << 61 / (m.capacity + 1)}
}

// segment is one step along an item's upper convex hull: from option from
// (−1 = omitted) to option to.
type segment struct {
	item     int32
	from, to int32
	dw, du   int64
}

// hull appends the upper-convex-hull segments of item i when its options
// are restricted by status st (and by alive, if non-nil). It returns the
// base option (−1 = omitted) or −2 if nothing is allowed.
func hull(m *model, i int, st int8, allowed func(o int32) bool, dst []segment) (int32, []segment) {
	it := &m.items[i]
	base := int32(-2)
	var bw, bu int64
	if st != stIn && allowed(-1) {
		base = -1
	}
	if st == stOut {
		return base, dst
	}
	pts := make([]int32, 0, len(it.opts))
	for o := range it.opts {
		if allowed(int32(o)) {
			pts = append(pts, int32(o))
		}
	}
	if base == -2 {
		if len(pts) == 0 {
			return -2, dst
		}
		base = pts[0]
		bw, bu = it.opts[base].w, it.opts[base].u
		pts = pts[1:]
	}
	cur, cw, cu := base, bw, bu
	for len(pts) > 0 {
		// Next hull point: the steepest slope from cur.
		best := -1
		for k, o := range pts {
			dw, du := it.opts[o].w-cw, it.opts[o].u-cu
			if du <= 0 {
				continue
			}
			if best < 0 || steeper(du, dw, it.opts[pts[best]].u-cu, it.opts[pts[best]].w-cw) >= 0 {
				best = k
			}
		}
		if best < 0 {
			break
		}
		o := pts[best]
		dst = append(dst, segment{item: int32(i), from: cur, to: o, dw: it.opts[o].w - cw, du: it.opts[o].u - cu})
		cur, cw, cu = o, it.opts[o].w, it.opts[o].u
		pts = pts[best+1:]
	}
	return base, dst
}

// steeper compares du1/dw1 with du2/dw2 (dw may be 0 = infinitely steep):
// +1 if the first is steeper, 0 if equal, −1 if flatter.
func steeper(du1, dw1, du2, dw2 int64) int {
	h1, l1 := bits.Mul64(uint64(du1), uint64(dw2))
	h2, l2 := bits.Mul64(uint64(du2), uint64(dw1))
	switch {
	case h1 > h2 || (h1 == h2 && l1 > l2):
		return 1
	case h1 == h2 && l1 == l2:
		return 0
	}
	return -1
}

// lpBound computes the LP relaxation of the multiple-choice knapsack (side
// constraints relaxed) for the items' status and allowed options, sets the
// multiplier to the break slope, and returns the hull segments in greedy
// order, the base options and the total base weight.
func lpBound(m *model, status []int8, allowed func(i int, o int32) bool) (l lagrange, segs []segment, base []int32, baseW int64, ok bool) {
	l = newLagrange(m)
	base = make([]int32, len(m.items))
	for i := range m.items {
		b, s := hull(m, i, status[i], func(o int32) bool { return allowed(i, o) }, segs)
		if b == -2 {
			return l, nil, nil, 0, false
		}
		segs = s
		base[i] = b
		if b >= 0 {
			baseW += m.items[i].opts[b].w
		}
	}
	if baseW > m.capacity {
		return l, nil, base, baseW, false
	}
	slices.SortStableFunc(segs, func(x, y segment) int { return -steeper(x.du, x.dw, y.du, y.dw) })
	room := m.capacity - baseW
	for _, s := range segs {
		if s.dw <= room {
			room -= s.dw
			continue
		}
		// Break segment: λ = du/dw, rounded down, clamped so that a·C fits.
		hi, lo := bits.Mul64(uint64(s.du), uint64(l.b))
		if hi < uint64(s.dw) {
			q, _ := bits.Div64(hi, lo, uint64(s.dw))
			l.a = int64(min(q, uint64(1)<<61/uint64(m.capacity+1)))
		} else {
			l.a = int64(uint64(1) << 61 / uint64(m.capacity+1))
		}
		break
	}
	return l, segs, base, baseW, true
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
