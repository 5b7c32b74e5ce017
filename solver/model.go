package solver

import (
	"cmp"
	"slices"
)

// The model is the normalised problem the search works on. Units that must
// be selected together (same_choice groups and cycles of requires) are
// merged into one multiple-choice item whose options are the Pareto-optimal
// combinations of their members' variants. Constraints are restated between
// items. Items are sorted oldest first (by their newest member's Order), which
// is the order the tie-break rule and the DP use.
type model struct {
	p        *Problem
	capacity int64
	items    []item
	unitItem []int32 // unit index -> item index
	vars     []int32 // option member variants, flattened (see opt.vars)

	req    [][]int32 // item -> items it requires
	revReq [][]int32 // item -> items requiring it
	excl   [][]int32 // item -> items it excludes
	groups []group
	inGrp  [][]int32 // item -> groups it belongs to

	stars  []star
	starOf []int32 // item -> star it is the centre or a leaf of, or −1

	chains []chain

	root     []int8 // status after root propagation: +1 in, -1 out, 0 free
	totalMax int64  // sum of best option utilities
}

type item struct {
	units     []int32 // member units, oldest first
	order     int64
	mandatory bool
	selfOut   bool  // an excludes between two members: the item cannot be selected
	opts      []opt // non-omitted options, Pareto-optimal, ascending in tokens and utility
}

// opt is one non-omitted option of an item: its member variants are
// model.vars[vars : vars+len(item.units)].
type opt struct {
	w, u int64
	vars int32
}

// star is a centre item that excludes each of its leaves (a summary and the
// raw messages it covers). Stars are disjoint. The bound and the DP treat a
// star exactly: either the centre is selected and every leaf omitted, or
// the centre is omitted.
type star struct {
	centre int32
	leaves []int32 // ascending
}

// chain is a path of one-way requires in which every link is the only
// requires of its requirer and the only one on its target: members[k+1]
// requires members[k] and nothing else, and nothing else requires
// members[k]. The requires of a contiguous window (each older exchange
// requires the next newer one) are a chain. The selected members are a
// prefix of members: the DP enforces that with one frontier slot instead
// of branching on each link (core.go).
type chain struct {
	members []int32 // newest (required by the rest) first
}

type group struct {
	k       int
	members []int32
	weights []int32
}

const (
	stIn   int8 = 1
	stOut  int8 = -1
	stFree int8 = 0
)

// buildModel merges, restates and propagates p, whose validated unit index
// is index. It reports false when root propagation finds a contradiction
// (the caller then explains it).
func buildModel(p *Problem, index map[string]int) (*model, bool) {
	n := len(p.Units)
	m := &model{p: p, capacity: p.Capacity}

	// Union-find over units: same_choice groups and requires cycles.
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int32) {
		ra, rb := find(a), find(b)
		if ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	reqAdj := make([][]int32, n)
	for _, c := range p.Constraints {
		switch c.Kind {
		case KindSameChoice:
			g0 := int32(index[c.Group[0]])
			for _, id := range c.Group[1:] {
				union(g0, int32(index[id]))
			}
		case KindRequires:
			a, b := int32(index[c.A]), int32(index[c.B])
			reqAdj[a] = append(reqAdj[a], b)
		}
	}
	for _, scc := range tarjan(reqAdj) {
		for _, u := range scc[1:] {
			union(scc[0], u)
		}
	}

	// Items, sorted by (newest member Order, smallest member index).
	members := make(map[int32][]int32)
	var roots []int32
	for u := 0; u < n; u++ {
		r := find(int32(u))
		if _, ok := members[r]; !ok {
			roots = append(roots, r)
		}
		members[r] = append(members[r], int32(u))
	}
	for _, r := range roots {
		us := members[r]
		slices.SortStableFunc(us, func(a, b int32) int {
			return cmp.Or(cmp.Compare(p.Units[a].Order, p.Units[b].Order), cmp.Compare(a, b))
		})
		it := item{units: us, order: p.Units[us[len(us)-1]].Order}
		for _, u := range us {
			it.mandatory = it.mandatory || p.Units[u].Mandatory
		}
		m.items = append(m.items, it)
	}
	slices.SortStableFunc(m.items, func(a, b item) int {
		return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(slices.Min(a.units), slices.Min(b.units)))
	})
	m.unitItem = make([]int32, n)
	for i, it := range m.items {
		for _, u := range it.units {
			m.unitItem[u] = int32(i)
		}
	}
	ni := len(m.items)
	for i := range m.items {
		m.buildOptions(i)
		if len(m.items[i].opts) > 0 {
			m.totalMax += m.items[i].opts[len(m.items[i].opts)-1].u
		}
	}

	// Restate constraints between items.
	m.req = make([][]int32, ni)
	m.revReq = make([][]int32, ni)
	m.excl = make([][]int32, ni)
	m.inGrp = make([][]int32, ni)
	type pair struct{ a, b int32 }
	seen := make(map[pair]bool)
	for _, c := range p.Constraints {
		switch c.Kind {
		case KindRequires:
			a, b := m.unitItem[index[c.A]], m.unitItem[index[c.B]]
			if a == b || seen[pair{a, b}] {
				continue
			}
			seen[pair{a, b}] = true
			m.req[a] = append(m.req[a], b)
			m.revReq[b] = append(m.revReq[b], a)
		case KindExcludes:
			a, b := m.unitItem[index[c.A]], m.unitItem[index[c.B]]
			if a == b {
				m.items[a].selfOut = true
				continue
			}
			if a > b {
				a, b = b, a
			}
			if seen[pair{-a - 1, b}] {
				continue
			}
			seen[pair{-a - 1, b}] = true
			m.excl[a] = append(m.excl[a], b)
			m.excl[b] = append(m.excl[b], a)
		case KindAtMost:
			w := make(map[int32]int32)
			var ms []int32
			total := 0
			for _, id := range c.Group {
				it := m.unitItem[index[id]]
				if w[it] == 0 {
					ms = append(ms, it)
				}
				w[it]++
				total++
			}
			if total <= c.K {
				continue
			}
			slices.Sort(ms)
			g := group{k: c.K, members: ms}
			for _, it := range ms {
				g.weights = append(g.weights, w[it])
			}
			gi := int32(len(m.groups))
			m.groups = append(m.groups, g)
			for _, it := range ms {
				m.inGrp[it] = append(m.inGrp[it], gi)
			}
		}
	}
	for i := range m.req {
		slices.Sort(m.req[i])
		slices.Sort(m.revReq[i])
		slices.Sort(m.excl[i])
	}

	m.findStars()
	m.findChains()

	// Root propagation.
	s := newSearchState(m)
	for i := range m.items {
		it := &m.items[i]
		if it.selfOut || len(it.opts) == 0 {
			if !s.set(int32(i), stOut) {
				return m, false
			}
		}
	}
	for _, g := range m.groups {
		for k, it := range g.members {
			if g.weights[k] > int32(g.k) && !s.set(it, stOut) {
				return m, false
			}
		}
	}
	for i := range m.items {
		if m.items[i].mandatory && !s.set(int32(i), stIn) {
			return m, false
		}
	}
	m.root = s.status
	return m, true
}

// buildOptions computes the Pareto-optimal non-omitted options of item i:
// the Minkowski sum of its members' variants, without those over capacity.
// Among options with equal tokens and utility the one with the lowest
// variant indices (newest member first) is kept.
func (m *model) buildOptions(i int) {
	it := &m.items[i]
	type cand struct {
		w, u int64
		vars []int32
	}
	cur := []cand{{}}
	for _, u := range it.units {
		var next []cand
		for _, c := range cur {
			for vi, v := range m.p.Units[u].Variants {
				w := c.w + v.Tokens
				if w > m.capacity {
					continue
				}
				vars := append(slices.Clip(c.vars), int32(vi))
				next = append(next, cand{w, c.u + v.Utility, vars})
			}
		}
		slices.SortStableFunc(next, func(a, b cand) int {
			if c := cmp.Compare(a.w, b.w); c != 0 {
				return c
			}
			if c := cmp.Compare(b.u, a.u); c != 0 {
				return c
			}
			for k := len(a.vars) - 1; k >= 0; k-- {
				if c := cmp.Compare(a.vars[k], b.vars[k]); c != 0 {
					return c
				}
			}
			return 0
		})
		cur = cur[:0]
		for _, c := range next {
			if len(cur) == 0 || c.u > cur[len(cur)-1].u {
				cur = append(cur, c)
			}
		}
		if len(cur) == 0 {
			break
		}
	}
	for _, c := range cur {
		if len(c.vars) != len(it.units) {
			break
		}
		it.opts = append(it.opts, opt{w: c.w, u: c.u, vars: int32(len(m.vars))})
		m.vars = append(m.vars, c.vars...)
	}
}

// tarjan returns the strongly connected components with more than one node
// of the graph adj, each sorted ascending.
func tarjan(adj [][]int32) [][]int32 {
	n := len(adj)
	idx := make([]int32, n)
	low := make([]int32, n)
	on := make([]bool, n)
	for i := range idx {
		idx[i] = -1
	}
	var stack []int32
	var out [][]int32
	next := int32(0)
	// Iterative DFS to survive long requires chains.
	type frame struct{ v, e int32 }
	for s := 0; s < n; s++ {
		if idx[s] >= 0 || len(adj[s]) == 0 {
			continue
		}
		call := []frame{{int32(s), 0}}
		idx[s], low[s] = next, next
		next++
		stack = append(stack, int32(s))
		on[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if int(f.e) < len(adj[v]) {
				w := adj[v][f.e]
				f.e++
				if idx[w] < 0 {
					idx[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[v] = min(low[v], idx[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == idx[v] {
				var comp []int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				if len(comp) > 1 {
					slices.Sort(comp)
					out = append(out, comp)
				}
			}
		}
	}
	return out
}

// searchState is a status assignment with propagation and undo.
type searchState struct {
	m        *model
	status   []int8
	inWeight []int32 // per group: total weight of items set in
	trail    []int32
}

func newSearchState(m *model) *searchState {
	s := &searchState{m: m, status: make([]int8, len(m.items)), inWeight: make([]int32, len(m.groups))}
	if m.root != nil {
		copy(s.status, m.root)
		for gi, g := range m.groups {
			for k, it := range g.members {
				if m.root[it] == stIn {
					s.inWeight[gi] += g.weights[k]
				}
			}
		}
	}
	return s
}

// set assigns item i the status v and propagates. It reports false on a
// contradiction; the partial assignment stays on the trail for undo.
func (s *searchState) set(i int32, v int8) bool {
	queue := []int32{i}
	vals := []int8{v}
	for len(queue) > 0 {
		i, v := queue[0], vals[0]
		queue, vals = queue[1:], vals[1:]
		if s.status[i] == v {
			continue
		}
		if s.status[i] != stFree {
			return false
		}
		s.status[i] = v
		s.trail = append(s.trail, i)
		m := s.m
		if v == stIn {
			for _, j := range m.req[i] {
				queue, vals = append(queue, j), append(vals, stIn)
			}
			for _, j := range m.excl[i] {
				queue, vals = append(queue, j), append(vals, stOut)
			}
			// Count i in every group before any early return, so that
			// undo (which uncounts them all) stays exact.
			for _, gi := range m.inGrp[i] {
				g := &m.groups[gi]
				s.inWeight[gi] += g.weights[slices.Index(g.members, i)]
			}
			for _, gi := range m.inGrp[i] {
				g := &m.groups[gi]
				room := int32(g.k) - s.inWeight[gi]
				if room < 0 {
					return false
				}
				for k, j := range g.members {
					if s.status[j] == stFree && g.weights[k] > room {
						queue, vals = append(queue, j), append(vals, stOut)
					}
				}
			}
		} else {
			for _, j := range m.revReq[i] {
				queue, vals = append(queue, j), append(vals, stOut)
			}
		}
	}
	return true
}

// undo reverts assignments back to trail length mark.
func (s *searchState) undo(mark int) {
	for len(s.trail) > mark {
		i := s.trail[len(s.trail)-1]
		s.trail = s.trail[:len(s.trail)-1]
		if s.status[i] == stIn {
			for _, gi := range s.m.inGrp[i] {
				g := &s.m.groups[gi]
				s.inWeight[gi] -= g.weights[slices.Index(g.members, i)]
			}
		}
		s.status[i] = stFree
	}
}

// violation returns an item to branch on when the item-level selection sel
// (sel[i] >= 0 means selected) breaks a side constraint, or -1 if none is
// broken. Only items free in status are candidates (propagation guarantees
// every violation has one). It prefers the item involved in the most
// violations, then the newest.
func (m *model) violation(sel []int32, status []int8, count []int32) int32 {
	clear(count)
	any := false
	for i := range m.items {
		in := sel[i] >= 0
		if !in {
			continue
		}
		for _, j := range m.req[i] {
			if sel[j] < 0 {
				count[j] += 2
				count[i]++
				any = true
			}
		}
		for _, j := range m.excl[i] {
			if sel[j] >= 0 {
				count[i]++ // and count[j]++ when i is j's partner
				any = true
			}
		}
	}
	for _, g := range m.groups {
		n := int32(0)
		for k, it := range g.members {
			if sel[it] >= 0 {
				n += g.weights[k]
			}
		}
		if n > int32(g.k) {
			any = true
			for _, it := range g.members {
				if sel[it] >= 0 {
					count[it]++
				}
			}
		}
	}
	if !any {
		return -1
	}
	best := int32(-1)
	for i := len(count) - 1; i >= 0; i-- {
		if count[i] > 0 && status[i] == stFree && (best < 0 || count[i] > count[best]) {
			best = int32(i)
		}
	}
	if best < 0 {
		return -2
	}
	return best
}

// unitChoice converts an item-level choice (option index, -1 omitted) to
// the per-unit choice of a Solution.
func (m *model) unitChoice(sel []int32) []int {
	out := make([]int, len(m.p.Units))
	for i := range out {
		out[i] = -1
	}
	for i, it := range m.items {
		if sel[i] < 0 {
			continue
		}
		o := it.opts[sel[i]]
		for k, u := range it.units {
			out[u] = int(m.vars[int(o.vars)+k])
		}
	}
	return out
}

// totals returns the utility and tokens of an item-level choice.
func (m *model) totals(sel []int32) (u, w int64) {
	for i, it := range m.items {
		if sel[i] >= 0 {
			u += it.opts[sel[i]].u
			w += it.opts[sel[i]].w
		}
	}
	return u, w
}

// better reports whether item-level choice a beats b under the tie-break
// rule: more utility, then fewer tokens, then, from the newest item down,
// the richer option (omitted ranks last).
func (m *model) better(a []int32, au, aw int64, b []int32, bu, bw int64) bool {
	if b == nil {
		return true
	}
	if au != bu {
		return au > bu
	}
	if aw != bw {
		return aw < bw
	}
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

// findStars picks disjoint stars greedily: centres with the most exclusion
// partners first (ties: newest), each taking the partners not yet in a star.
func (m *model) findStars() {
	m.starOf = make([]int32, len(m.items))
	for i := range m.starOf {
		m.starOf[i] = -1
	}
	var cands []int32
	for i := range m.items {
		if len(m.excl[i]) >= 2 {
			cands = append(cands, int32(i))
		}
	}
	slices.SortStableFunc(cands, func(a, b int32) int {
		return cmp.Or(cmp.Compare(len(m.excl[b]), len(m.excl[a])), cmp.Compare(b, a))
	})
	for _, c := range cands {
		if m.starOf[c] >= 0 {
			continue
		}
		var leaves []int32
		for _, j := range m.excl[c] {
			if m.starOf[j] < 0 {
				leaves = append(leaves, j)
			}
		}
		if len(leaves) < 2 {
			continue
		}
		si := int32(len(m.stars))
		m.stars = append(m.stars, star{centre: c, leaves: leaves})
		m.starOf[c] = si
		for _, j := range leaves {
			m.starOf[j] = si
		}
	}
}

// recount recomputes group weights from status.
func (s *searchState) recount() {
	clear(s.inWeight)
	for gi, g := range s.m.groups {
		for k, it := range g.members {
			if s.status[it] == stIn {
				s.inWeight[gi] += g.weights[k]
			}
		}
	}
}

// findChains collects the chains of length two or more, each from the
// item nothing in it requires.
func (m *model) findChains() {
	next := make([]int32, len(m.items)) // the item whose only requires is i, if i has no other requirer
	linked := make([]bool, len(m.items))
	for i := range next {
		next[i] = -1
	}
	for a := range m.items {
		if len(m.req[a]) == 1 {
			if b := m.req[a][0]; len(m.revReq[b]) == 1 {
				next[b] = int32(a)
				linked[a] = true
			}
		}
	}
	for i := range m.items {
		if linked[i] || next[i] < 0 {
			continue
		}
		c := chain{members: []int32{int32(i)}}
		for j := next[i]; j >= 0; j = next[j] {
			c.members = append(c.members, j)
		}
		m.chains = append(m.chains, c)
	}
}
