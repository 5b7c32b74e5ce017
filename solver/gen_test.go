package solver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Constraint levels of the generated conversations.
const (
	consNone     = iota // no constraints: tool calls and results are independent units
	consPairs           // tool call <-> result pairing (requires both ways)
	consFull            // pairs, one summary per 40 old messages excluding its raws, at_most(nsum/2) summaries
	consHard            // full, summaries capped at nsum/4, at_most(2) over big (>4k) tool results
	consWarm            // full, but each summary is a warm artifact with 4 fidelities
	consWarmHard        // hard, with 4-fidelity warm artifacts
	consWindow          // the runtime's shape: a contiguous window of whole exchanges and warm artifacts (genWindow)
)

var consNames = []string{"none", "pairs", "full", "hard", "warm", "warmhard", "window"}

// genConversation builds a realistic pack problem with n messages (the
// generator of reference/solver-notes.md §2): a mandatory system prompt;
// user (median 45 tokens), assistant (median 220) and tool call (70) /
// result (700, up to 50k) messages; the last 4 messages mandatory with 4
// variants (2.0M/1.6M/1.3M/1.0M); the boundary message 1.5M…0.8M; the newest
// 25% warm with 4 variants by fidelity (100k/60k/35k/15k + seq, tokens
// ×1/0.4/0.15/0.06); older messages one variant with utility 1000 + seq.
// From consFull on, one summary per 40 old messages excludes the raws it
// covers (tokens 8% of the block, utility half of it); from consWarm on,
// it is a warm artifact with 4 fidelities (tokens 20/8/4/1.5% of the
// block, utility 80/50/40/25%).
func genConversation(seed uint64, n int, capacity int64, cons int) *Problem {
	if cons == consWindow {
		return genWindow(seed, n, capacity)
	}
	r := rand.New(rand.NewPCG(seed, uint64(n)*31+uint64(cons)))
	logn := logNormal(r)
	type msg struct {
		kind string
		tok  int64
		pair int // index of the paired call/result, -1 if none
	}
	msgs := []msg{{kind: "system", tok: logn(800, 0.3, 4000), pair: -1}}
	for len(msgs) < n {
		msgs = append(msgs, msg{kind: "user", tok: logn(45, 1.0, 8000), pair: -1})
		if r.Float64() < 0.35 {
			for k := 1 + r.IntN(4); k > 0 && len(msgs)+2 <= n; k-- {
				c := len(msgs)
				msgs = append(msgs, msg{kind: "call", tok: logn(70, 0.6, 2000), pair: c + 1})
				msgs = append(msgs, msg{kind: "result", tok: logn(700, 1.2, 50000), pair: c})
			}
		}
		msgs = append(msgs, msg{kind: "assistant", tok: logn(220, 0.9, 8000), pair: -1})
	}
	msgs = msgs[:n]
	if last := &msgs[n-1]; last.pair >= n {
		last.pair = -1
	}
	for i := range msgs {
		if msgs[i].pair >= n {
			msgs[i].pair = -1
		}
	}
	p := &Problem{Capacity: capacity}
	warm := n - n/4
	boundary := n - 5
	frac := []float64{1, 0.4, 0.15, 0.06}
	for i, m := range msgs {
		u := Unit{ID: fmt.Sprintf("m%d", i), Order: int64(i)}
		four := func(utils ...int64) {
			for k, ut := range utils {
				u.Variants = append(u.Variants, Variant{Kind: fidelity[k], Tokens: max(1, int64(float64(m.tok)*frac[k])), Utility: ut})
			}
		}
		switch {
		case i == 0:
			u.Mandatory = true
			u.Variants = []Variant{{Kind: "verbatim", Tokens: m.tok, Utility: 10_000_000}}
		case i >= n-4:
			u.Mandatory = true
			four(2_000_000, 1_600_000, 1_300_000, 1_000_000)
		case i == boundary:
			four(1_500_000, 1_200_000, 1_000_000, 800_000)
		case i >= warm:
			s := int64(i)
			four(100_000+s, 60_000+s, 35_000+s, 15_000+s)
		default:
			u.Variants = []Variant{{Kind: "verbatim", Tokens: m.tok, Utility: 1000 + int64(i)}}
		}
		p.Units = append(p.Units, u)
	}
	if cons >= consPairs {
		for i, m := range msgs {
			if m.kind == "result" && m.pair >= 0 {
				p.Constraints = append(p.Constraints, Requires(p.Units[i].ID, p.Units[m.pair].ID), Requires(p.Units[m.pair].ID, p.Units[i].ID))
			}
		}
	}
	if cons >= consFull {
		var sums, big []string
		for start := 1; start+40 <= warm; start += 40 {
			var tok, ut int64
			for i := start; i < start+40; i++ {
				tok += msgs[i].tok
				ut += p.Units[i].Variants[0].Utility
			}
			id := fmt.Sprintf("s%d", start)
			su := Unit{ID: id, Order: int64(start + 39), Variants: []Variant{{Kind: "summary", Tokens: max(1, tok*8/100), Utility: ut / 2}}}
			if cons >= consWarm {
				su.Variants = nil
				for k, f := range [][2]int64{{200, 800}, {80, 500}, {40, 400}, {15, 250}} {
					su.Variants = append(su.Variants, Variant{Kind: fidelity[k], Tokens: max(1, tok*f[0]/1000), Utility: ut * f[1] / 1000})
				}
			}
			p.Units = append(p.Units, su)
			for i := start; i < start+40; i++ {
				p.Constraints = append(p.Constraints, Excludes(id, p.Units[i].ID))
			}
			sums = append(sums, id)
		}
		k := len(sums) / 2
		if cons == consHard || cons == consWarmHard {
			k = len(sums) / 4
			for i, m := range msgs {
				if m.kind == "result" && m.tok > 4000 && !p.Units[i].Mandatory {
					big = append(big, p.Units[i].ID)
				}
			}
			if len(big) > 2 {
				p.Constraints = append(p.Constraints, AtMost(2, big...))
			}
		}
		if len(sums) > k {
			p.Constraints = append(p.Constraints, AtMost(k, sums...))
		}
	}
	return p
}

var fidelity = []string{"verbatim", "detailed_summary", "compact_summary", "facts_only"}

// greedyNewestFirst is the baseline most chat libraries use: mandatory units
// first at their cheapest variant, then every other unit newest first at
// its first (richest) variant, skipping units that do not fit or would
// break a constraint. A unit is added together with what it requires and
// its same_choice partners. It returns nil if the mandatory units alone do
// not fit.
func greedyNewestFirst(p *Problem) []int {
	n := len(p.Units)
	idx := make(map[string]int, n)
	for i, u := range p.Units {
		idx[u.ID] = i
	}
	partners := make([][]int, n) // requires targets and same_choice partners
	touch := make([][]int, n)    // constraints mentioning each unit
	for ci, c := range p.Constraints {
		for _, id := range append([]string{c.A, c.B}, c.Group...) {
			if i, ok := idx[id]; ok {
				touch[i] = append(touch[i], ci)
			}
		}
		switch c.Kind {
		case KindRequires:
			partners[idx[c.A]] = append(partners[idx[c.A]], idx[c.B])
		case KindSameChoice:
			for _, a := range c.Group {
				for _, b := range c.Group {
					if a != b {
						partners[idx[a]] = append(partners[idx[a]], idx[b])
					}
				}
			}
		}
	}
	choice := make([]int, n)
	for i := range choice {
		choice[i] = -1
	}
	cheapest := func(u int) int {
		best := 0
		for k, v := range p.Units[u].Variants {
			if v.Tokens < p.Units[u].Variants[best].Tokens {
				best = k
			}
		}
		return best
	}
	var tokens int64
	// try adds u (at variant v) and its closure, or nothing.
	try := func(u, v int) bool {
		// The closure is walked with its tokens and given up as soon as
		// they exceed the capacity: on a chain of requires the walk from an
		// old unit would otherwise revisit every newer one each time.
		add := []int{u}
		seen := map[int]bool{u: true}
		t := tokens + p.Units[u].Variants[v].Tokens
		for k := 0; k < len(add) && t <= p.Capacity; k++ {
			for _, w := range partners[add[k]] {
				if !seen[w] && choice[w] < 0 {
					seen[w] = true
					add = append(add, w)
					t += p.Units[w].Variants[0].Tokens
				}
			}
		}
		if t > p.Capacity {
			return false
		}
		// Tried in place (every unit in add is unselected) and undone on
		// failure.
		for _, w := range add {
			choice[w] = 0
			if w == u {
				choice[w] = v
			}
		}
		ok := true
		// Constraints other than capacity, those touching the added units.
		for _, w := range add {
			for _, ci := range touch[w] {
				ok = ok && holds(p, idx, p.Constraints[ci], choice)
			}
		}
		if !ok {
			for _, w := range add {
				choice[w] = -1
			}
			return false
		}
		tokens = t
		return true
	}
	for i := n - 1; i >= 0; i-- {
		if p.Units[i].Mandatory && choice[i] < 0 {
			choice[i] = cheapest(i)
			tokens += p.Units[i].Variants[choice[i]].Tokens
		}
	}
	if tokens > p.Capacity {
		return nil
	}
	for i := n - 1; i >= 0; i-- {
		if choice[i] < 0 {
			try(i, 0)
		}
	}
	return choice
}

// holds reports whether choice satisfies constraint c.
func holds(p *Problem, idx map[string]int, c Constraint, choice []int) bool {
	sel := func(id string) bool { return choice[idx[id]] >= 0 }
	switch c.Kind {
	case KindRequires:
		return !sel(c.A) || sel(c.B)
	case KindExcludes:
		return !sel(c.A) || !sel(c.B)
	case KindAtMost:
		k := 0
		for _, id := range c.Group {
			if sel(id) {
				k++
			}
		}
		return k <= c.K
	case KindSameChoice:
		for _, id := range c.Group {
			if sel(id) != sel(c.Group[0]) {
				return false
			}
		}
	}
	return true
}

// referenceDP solves an unconstrained problem (no Constraints) exactly with
// the textbook O(units × capacity × variants) multiple-choice knapsack
// table, independent of the solver's code. It returns the optimum utility
// and false if the mandatory units cannot fit.
func referenceDP(p *Problem) (int64, bool) {
	c := int(p.Capacity)
	const neg = math.MinInt64 / 4
	f := make([]int64, c+1)
	g := make([]int64, c+1)
	for _, u := range p.Units {
		for w := 0; w <= c; w++ {
			g[w] = neg
			if !u.Mandatory {
				g[w] = f[w]
			}
			for _, v := range u.Variants {
				if t := int(v.Tokens); t <= w && f[w-t] > neg {
					g[w] = max(g[w], f[w-t]+v.Utility)
				}
			}
		}
		f, g = g, f
	}
	if f[c] <= neg {
		return 0, false
	}
	return f[c], true
}

// randDense returns a random problem of n units (1–3 variants, utility
// close to tokens, so that many packs tie closely) with ncons constraints
// of random pairs and groups: exclusions without star structure, one-way
// requires and overlapping at_most groups, which the DP enforces only in
// part, so that the search branches on a small core.
func randDense(r *rand.Rand, n, ncons int) *Problem {
	p := &Problem{}
	var total int64
	for i := 0; i < n; i++ {
		u := Unit{ID: fmt.Sprintf("u%d", i), Order: int64(i)}
		for j := 0; j < 1+r.IntN(3); j++ {
			w := int64(5 + r.IntN(60))
			u.Variants = append(u.Variants, Variant{Kind: "v", Tokens: w, Utility: w*int64(80+r.IntN(40))/100 + int64(r.IntN(10))})
		}
		total += u.Variants[0].Tokens
		p.Units = append(p.Units, u)
	}
	p.Capacity = total / 3
	id := func() string { return p.Units[r.IntN(n)].ID }
	for c := 0; c < ncons; c++ {
		a, b := id(), id()
		for a == b {
			b = id()
		}
		switch r.IntN(4) {
		case 0:
			p.Constraints = append(p.Constraints, Requires(a, b))
		case 1, 2:
			p.Constraints = append(p.Constraints, Excludes(a, b))
		case 3:
			perm := r.Perm(n)[:4+r.IntN(6)]
			var g []string
			for _, i := range perm {
				g = append(g, p.Units[i].ID)
			}
			p.Constraints = append(p.Constraints, AtMost(1+r.IntN(3), g...))
		}
	}
	return p
}

// genWindow builds a problem of the shape host/pack gives the solver for a
// conversation pack under window(contiguous) with warm artifacts (see
// host/pack/conversation.go and host/runtime/warm.go), over n messages of
// genConversation's sizes (user, assistant, tool call/result pairs, no
// system prompt: sections are fixed costs outside the problem):
//
//   - the hot tail, the last 12 messages (moved back so that it does not
//     start on a tool result), mandatory, utility 1,000,000 + seq;
//   - the cold-history boundary, mandatory, 11 tokens, 2,000,000;
//   - every older message optional, utility 1,000 + seq; an exchange (a
//     user message and what follows it up to the next) is all or nothing
//     (same_choice with the user message, a result with its call) and
//     requires the next newer exchange, so what is kept is a suffix of
//     whole exchanges; older messages before the first user message are
//     left out, as the runtime does;
//   - a warm artifact per 8 older messages, newest range first (the last
//     may be shorter), each excluding the raws it covers, with 4
//     representations: verbatim (the raws' tokens + 8, 95% of their
//     utility), detailed (12%, at least 40 tokens, 90%), compact (6%, at
//     least 20, 70%) and facts (3%, at least 12, 60%).
//
// At a 32k cap only a fraction of the window fits, so the optimum trades
// summaries against a run of raw exchanges.
func genWindow(seed uint64, n int, capacity int64) *Problem {
	r := rand.New(rand.NewPCG(seed, uint64(n)*31+consWindow))
	logn := logNormal(r)
	type msg struct {
		kind string
		tok  int64
		call int // the call of a result, else -1
	}
	var msgs []msg
	for len(msgs) < n {
		msgs = append(msgs, msg{kind: "user", tok: logn(45, 1.0, 8000), call: -1})
		if r.Float64() < 0.35 {
			for k := 1 + r.IntN(4); k > 0 && len(msgs)+2 <= n; k-- {
				c := len(msgs)
				msgs = append(msgs, msg{kind: "call", tok: logn(70, 0.6, 2000), call: -1})
				msgs = append(msgs, msg{kind: "result", tok: logn(700, 1.2, 50000), call: c})
			}
		}
		msgs = append(msgs, msg{kind: "assistant", tok: logn(220, 0.9, 8000), call: -1})
	}
	msgs = msgs[:n]
	hot := max(0, n-12)
	for hot > 0 && msgs[hot].kind == "result" {
		hot--
	}
	p := &Problem{Capacity: capacity}
	id := func(i int) string { return fmt.Sprintf("m%d", i) }
	for i, m := range msgs {
		u := Unit{ID: id(i), Order: int64(i + 1), Variants: []Variant{{Kind: "verbatim", Tokens: m.tok, Utility: 1000 + int64(i+1)}}}
		if i >= hot {
			u.Mandatory = true
			u.Variants[0].Utility = 1_000_000 + int64(i+1)
		}
		p.Units = append(p.Units, u)
	}
	p.Units = append(p.Units, Unit{ID: "boundary", Mandatory: true, Order: int64(n + 1),
		Variants: []Variant{{Kind: "instruction", Tokens: 11, Utility: 2_000_000}}})
	first := slices.IndexFunc(msgs[:hot], func(m msg) bool { return m.kind == "user" })
	if first < 0 {
		first = hot
	}
	for i := first; i < n; i++ {
		if m := msgs[i]; m.call >= 0 {
			p.Constraints = append(p.Constraints, SameChoice(id(m.call), id(i)))
		}
	}
	exchange, prev := -1, -1
	for i := first; i < hot; i++ {
		switch msgs[i].kind {
		case "user":
			prev, exchange = exchange, i
			if prev >= 0 {
				p.Constraints = append(p.Constraints, Requires(id(prev), id(exchange)))
			}
		case "result":
		default:
			p.Constraints = append(p.Constraints, SameChoice(id(exchange), id(i)))
		}
	}
	for to := hot - 1; to >= first; to -= 8 {
		from := max(first, to-7)
		var tok, ut int64
		for i := from; i <= to; i++ {
			tok += msgs[i].tok
			ut += p.Units[i].Variants[0].Utility
		}
		a := Unit{ID: fmt.Sprintf("w%d_%d", from, to), Order: int64(to + 1)}
		for k, f := range [][3]int64{{1000, 8, 95}, {120, 40, 90}, {60, 20, 70}, {30, 12, 60}} {
			t := tok * f[0] / 1000
			if k == 0 {
				t += f[1]
			} else {
				t = max(t, f[1])
			}
			a.Variants = append(a.Variants, Variant{Kind: fidelity[k], Tokens: t, Utility: ut * f[2] / 100})
		}
		p.Units = append(p.Units, a)
		for i := from; i <= to; i++ {
			p.Constraints = append(p.Constraints, Excludes(a.ID, id(i)))
		}
	}
	return p
}

// logNormal draws sizes from r: a log-normal around median, in [1, hi].
func logNormal(r *rand.Rand) func(median, sigma float64, hi int64) int64 {
	return func(median, sigma float64, hi int64) int64 {
		v := int64(median * math.Exp(sigma*r.NormFloat64()))
		return min(max(v, 1), hi)
	}
}
