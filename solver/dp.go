package solver

// The core DP is an exact multiple-choice knapsack over the undecided items:
// a list of Pareto-optimal (tokens, utility) states per layer, pruned by the
// Lagrangian bound of the remaining layers against a target utility. Only
// states that can still reach the target survive, so with a good incumbent
// the lists stay short even at large capacities (Pisinger's idea, with the
// LP multiplier as the bound).
//
// Layers are items oldest first. Among states with equal tokens and utility
// the one whose newest differing item takes the later (richer) option wins,
// which makes the result the canonical optimum of the tie-break rule.

type dpItem struct {
	item int32
	opts []int32 // allowed options ascending; −1 (omitted) first if allowed
}

type dpResult struct {
	found    bool
	w, u     int64
	choice   []int32 // per dpItem: the chosen option
	states   int
	overflow bool // MaxStates reached: no conclusion
	stopped  bool // deadline: no conclusion
}

type dpBuf struct {
	cw, cp []int64
	nw, np []int64
	npar   []int32
	nopt   []int32
	tw, tp []int64
	tpar   []int32
	topt   []int32
	parLog []int32
	optLog []int32
	layer  []int
	need   []int64
}

// run solves max Σu subject to Σw ≤ capacity over items, looking only for
// solutions with Σu ≥ target. It returns the canonical best such solution,
// or found == false if there is none.
func (m *model) runDP(items []dpItem, capacity, target int64, l lagrange, maxStates int, stop func() bool, buf *dpBuf) dpResult {
	var res dpResult
	n := len(items)
	if capacity < 0 {
		return res
	}
	// need[i]: a state after i layers survives iff b·p − a·w ≥ need[i].
	if cap(buf.need) < n+1 {
		buf.need = make([]int64, n+1)
	}
	need := buf.need[:n+1]
	suffix := int64(0)
	need[n] = l.b*target - l.a*capacity
	for i := n - 1; i >= 0; i-- {
		best := int64(-1 << 62)
		it := &m.items[items[i].item]
		for _, o := range items[i].opts {
			v := int64(0)
			if o >= 0 {
				v = l.val(it.opts[o].w, it.opts[o].u)
			}
			best = max(best, v)
		}
		suffix += best
		need[i] = l.b*target - l.a*capacity - suffix
	}
	buf.cw = append(buf.cw[:0], 0)
	buf.cp = append(buf.cp[:0], 0)
	if 0 < need[0] {
		return res
	}
	buf.parLog = buf.parLog[:0]
	buf.optLog = buf.optLog[:0]
	buf.layer = buf.layer[:0]
	res.states = 1
	for i := 0; i < n; i++ {
		if stop() {
			res.stopped = true
			return res
		}
		it := &m.items[items[i].item]
		thr := need[i+1]
		buf.nw, buf.np, buf.npar, buf.nopt = buf.nw[:0], buf.np[:0], buf.npar[:0], buf.nopt[:0]
		for k, o := range items[i].opts {
			var ow, ou int64
			if o >= 0 {
				ow, ou = it.opts[o].w, it.opts[o].u
			}
			// Merge acc (n*) with cur shifted by (ow, ou) into t*.
			buf.tw, buf.tp, buf.tpar, buf.topt = buf.tw[:0], buf.tp[:0], buf.tpar[:0], buf.topt[:0]
			a, na := 0, len(buf.nw)
			j, nc := 0, len(buf.cw)
			last := int64(-1)
			// next valid shifted candidate at or after j
			adv := func() {
				for j < nc {
					w := buf.cw[j] + ow
					if w > capacity {
						j = nc
						return
					}
					if l.b*(buf.cp[j]+ou)-l.a*w >= thr {
						return
					}
					j++
				}
			}
			adv()
			for a < na || j < nc {
				var w, p int64
				var par int32
				var op int32
				takeNew := false
				if a >= na {
					takeNew = true
				} else if j < nc {
					sw, sp := buf.cw[j]+ow, buf.cp[j]+ou
					aw, ap := buf.nw[a], buf.np[a]
					takeNew = sw < aw || (sw == aw && sp >= ap)
					if sw == aw && sp == ap {
						a++ // the richer option wins the tie
					}
				}
				if takeNew {
					w, p, par, op = buf.cw[j]+ow, buf.cp[j]+ou, int32(j), int32(k)
					j++
					adv()
				} else {
					w, p, par, op = buf.nw[a], buf.np[a], buf.npar[a], buf.nopt[a]
					a++
				}
				if p > last {
					last = p
					buf.tw = append(buf.tw, w)
					buf.tp = append(buf.tp, p)
					buf.tpar = append(buf.tpar, par)
					buf.topt = append(buf.topt, op)
				}
			}
			buf.nw, buf.tw = buf.tw, buf.nw
			buf.np, buf.tp = buf.tp, buf.np
			buf.npar, buf.tpar = buf.tpar, buf.npar
			buf.nopt, buf.topt = buf.topt, buf.nopt
		}
		if len(buf.nw) == 0 {
			return res
		}
		buf.layer = append(buf.layer, len(buf.parLog))
		buf.parLog = append(buf.parLog, buf.npar...)
		buf.optLog = append(buf.optLog, buf.nopt...)
		res.states += len(buf.nw)
		if len(buf.parLog) > maxStates {
			res.overflow = true
			return res
		}
		buf.cw, buf.nw = buf.nw, buf.cw
		buf.cp, buf.np = buf.np, buf.cp
	}
	s := len(buf.cw) - 1
	if buf.cp[s] < target {
		return res
	}
	res.found = true
	res.w, res.u = buf.cw[s], buf.cp[s]
	res.choice = make([]int32, n)
	for i := n - 1; i >= 0; i-- {
		g := buf.layer[i] + s
		res.choice[i] = items[i].opts[buf.optLog[g]]
		s = int(buf.parLog[g])
	}
	return res
}
