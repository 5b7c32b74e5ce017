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
	low  bool  // the DP's grid reaches down to 0 (dpGrid)
	lp   int64 // with low: the LP's a, which the grid spans too
}

// val returns b·u − a·w.
func (l lagrange) val(w, u int64) int64 { return l.b*u - l.a*w }

// newLagrange returns b for the model's magnitudes with a = 0.
func newLagrange(m *model) lagrange {
	k := 60 - bits.Len64(uint64(m.totalMax)+1) - 1
	k = min(max(k, 0), 24)
	return lagrange{b: 1 << k, aMax: int64(1) << 61 / (m.capacity + 1), low: len(m.chains) > 0}
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
