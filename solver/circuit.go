package solver

import (
	"math/bits"

	"github.com/go-air/gini"
	"github.com/go-air/gini/logic"
	"github.com/go-air/gini/z"
)

// A circuit is a problem's admissibility model compiled into gini, straight
// from the Problem (not from the solver's merged model, so that it checks
// the model too): one input literal per unit variant; at most one variant
// per unit (omission is all false); and, each behind its own activation
// literal (or unguarded, for a check that only needs a yes or no), every
// mandatory unit and every constraint: requires and
// excludes as clauses, same_choice as a cycle of implications, at_most as
// a sorting network (logic.CardSort). Sums of tokens or utility over a set
// of units are pseudo-Boolean: a binary adder over the units' one-hot
// variant literals, compared with a constant bit by bit (sum and atLeast).
//
// NB: every variable comes from the logic.C (c.Lit), never from
// gini.Lit or Activate, whose numbering would collide with circuit nodes;
// every circuit node used in a clause is flushed first (flush).
type circuit struct {
	p    *Problem
	idx  map[string]int
	c    *logic.C
	g    *gini.Gini
	mark []int8
	x    [][]z.Lit // per unit: its variants' literals
	sel  []z.Lit   // per unit: selected (the OR of x)
	// Activation literals: act[i] for mandatory unit i (z.LitNull if not
	// mandatory), con[j] for Constraints[j].
	act, con []z.Lit
	clauses  int
}

// compile builds the circuit of p, whose validated unit index is idx.
// Unless guarded, mandatory units and constraints are plain clauses, with
// no activation literals (act and con stay z.LitNull). Only units that a
// rule mentions, mandatory units and the units of sums get literals (the
// others' x is nil): a unit in no rule constrains nothing but the sums.
func compile(p *Problem, idx map[string]int, guarded bool, sums []int) *circuit {
	n := len(p.Units)
	used := make([]bool, n)
	for _, u := range sums {
		used[u] = true
	}
	vars := 2 * len(sums)
	for i, u := range p.Units {
		if u.Mandatory {
			used[i] = true
			vars += 2
		}
	}
	for _, c := range p.Constraints {
		vars += 1 + len(c.Group)*8 // a sorting network's comparators
		for _, id := range append([]string{c.A, c.B}, c.Group...) {
			if i, ok := idx[id]; ok && !used[i] {
				used[i] = true
				vars += 2
			}
		}
	}
	k := &circuit{p: p, idx: idx, c: logic.NewCCap(vars), g: gini.NewVc(vars, 3*vars)}
	k.flush(k.c.T) // the constants
	k.x = make([][]z.Lit, n)
	k.sel = make([]z.Lit, n)
	k.act = make([]z.Lit, n)
	for i, u := range p.Units {
		if !used[i] {
			continue
		}
		xs := make([]z.Lit, len(u.Variants))
		for j := range xs {
			xs[j] = k.c.Lit()
		}
		k.x[i] = xs
		for a := range xs {
			for b := a + 1; b < len(xs); b++ {
				k.clause(xs[a].Not(), xs[b].Not())
			}
		}
		k.sel[i] = k.or(xs)
		if u.Mandatory {
			k.act[i] = k.guard(guarded)
			k.clause(k.act[i].Not(), k.sel[i])
		}
	}
	k.con = make([]z.Lit, len(p.Constraints))
	for j, c := range p.Constraints {
		a := k.guard(guarded)
		k.con[j] = a
		switch c.Kind {
		case KindRequires:
			k.clause(a.Not(), k.sel[idx[c.A]].Not(), k.sel[idx[c.B]])
		case KindExcludes:
			k.clause(a.Not(), k.sel[idx[c.A]].Not(), k.sel[idx[c.B]].Not())
		case KindSameChoice:
			for i, id := range c.Group {
				next := c.Group[(i+1)%len(c.Group)]
				k.clause(a.Not(), k.sel[idx[id]].Not(), k.sel[idx[next]])
			}
		case KindAtMost:
			ms := make([]z.Lit, len(c.Group))
			for i, id := range c.Group {
				ms[i] = k.sel[idx[id]]
			}
			leq := k.c.CardSort(ms).Leq(c.K)
			k.flush(leq)
			k.clause(a.Not(), leq)
		}
	}
	return k
}

// guard returns a new activation literal, or z.LitNull if not guarded.
func (k *circuit) guard(guarded bool) z.Lit {
	if !guarded {
		return z.LitNull
	}
	return k.c.Lit()
}

// clause adds the clause ms to gini, leaving out z.LitNull.Not(), the
// guard of an unguarded rule.
func (k *circuit) clause(ms ...z.Lit) {
	for _, m := range ms {
		if m != z.LitNull.Not() {
			k.g.Add(m)
		}
	}
	k.g.Add(0)
	k.clauses++
}

// flush adds the circuit nodes under roots that gini does not have yet.
func (k *circuit) flush(roots ...z.Lit) {
	var n int
	k.mark, n = k.c.CnfSince(k.g, k.mark, roots...)
	k.clauses += 3 * n
}

// or returns a literal equivalent to the disjunction of ms.
func (k *circuit) or(ms []z.Lit) z.Lit {
	if len(ms) == 1 {
		return ms[0]
	}
	y := k.c.Lit()
	long := []z.Lit{y.Not()}
	for _, m := range ms {
		k.clause(m.Not(), y)
		long = append(long, m)
	}
	k.clause(long...)
	return y
}

// sum returns the bits (least significant first) of Σ_{u ∈ units}
// weight(u, chosen variant of u), for non-negative weights.
func (k *circuit) sum(units []int, weight func(u, v int) int64) []z.Lit {
	var cols [][]z.Lit
	for _, u := range units {
		for b := 0; ; b++ {
			var on []z.Lit
			any := false
			for v, x := range k.x[u] {
				w := uint64(weight(u, v))
				if w>>b != 0 {
					any = true
				}
				if w>>b&1 != 0 {
					on = append(on, x)
				}
			}
			if !any {
				break
			}
			for len(cols) <= b {
				cols = append(cols, nil)
			}
			if len(on) > 0 {
				cols[b] = append(cols[b], k.or(on))
			}
		}
	}
	// Column compression: full adders on three bits of a column, half
	// adders on two, carries to the next column.
	var out []z.Lit
	for b := 0; b < len(cols); b++ {
		col := cols[b]
		for len(col) > 1 {
			var s, c z.Lit
			if len(col) >= 3 {
				s, c = k.fullAdder(col[0], col[1], col[2])
				col = append(col[3:], s)
			} else {
				s, c = k.halfAdder(col[0], col[1])
				col = append(col[2:], s)
			}
			if b+1 == len(cols) {
				cols = append(cols, nil)
			}
			cols[b+1] = append(cols[b+1], c)
		}
		if len(col) == 0 {
			out = append(out, k.c.F)
		} else {
			out = append(out, col[0])
		}
	}
	return out
}

// fullAdder returns the sum and carry of a+b+c in direct CNF.
func (k *circuit) fullAdder(a, b, c z.Lit) (s, carry z.Lit) {
	s, carry = k.c.Lit(), k.c.Lit()
	for m := 0; m < 8; m++ {
		ins := [3]z.Lit{a, b, c}
		odd := bits.OnesCount(uint(m))%2 == 1
		cl := make([]z.Lit, 0, 4)
		for i := range ins {
			if m>>i&1 != 0 {
				cl = append(cl, ins[i].Not())
			} else {
				cl = append(cl, ins[i])
			}
		}
		if odd {
			cl = append(cl, s)
		} else {
			cl = append(cl, s.Not())
		}
		k.clause(cl...)
	}
	// carry = majority(a, b, c)
	for _, p := range [][2]z.Lit{{a, b}, {a, c}, {b, c}} {
		k.clause(p[0].Not(), p[1].Not(), carry)
		k.clause(p[0], p[1], carry.Not())
	}
	return s, carry
}

// halfAdder returns the sum and carry of a+b in direct CNF.
func (k *circuit) halfAdder(a, b z.Lit) (s, carry z.Lit) {
	s, carry = k.c.Lit(), k.c.Lit()
	k.clause(a.Not(), b.Not(), s.Not())
	k.clause(a, b, s.Not())
	k.clause(a.Not(), b, s)
	k.clause(a, b.Not(), s)
	k.clause(a.Not(), b.Not(), carry)
	k.clause(a, carry.Not())
	k.clause(b, carry.Not())
	return s, carry
}

// atMost adds act → (S ≤ bound) for the bits S of a sum: for every bit i
// with bound_i = 0, S_i implies that some higher bit j with bound_j = 1
// is clear. A negative bound makes act false.
func (k *circuit) atMost(act z.Lit, s []z.Lit, bound int64) {
	if bound < 0 {
		k.clause(act.Not())
		return
	}
	if len(s) < 64 && uint64(bound)>>len(s) != 0 {
		return // the sum cannot reach the bound's top bit
	}
	for i := range s {
		if uint64(bound)>>i&1 != 0 {
			continue
		}
		cl := []z.Lit{act.Not(), s[i].Not()}
		for j := i + 1; j < len(s) && j < 63; j++ {
			if uint64(bound)>>j&1 != 0 {
				cl = append(cl, s[j].Not())
			}
		}
		k.clause(cl...)
	}
}

// atLeast adds act → (S ≥ bound): for every bit i with bound_i = 1, S_i
// or some higher bit j with bound_j = 0 is set. A bound beyond the sum's
// width makes act false.
func (k *circuit) atLeast(act z.Lit, s []z.Lit, bound int64) {
	if bound <= 0 {
		return
	}
	if bits.Len64(uint64(bound)) > len(s) {
		k.clause(act.Not())
		return
	}
	for i := range s {
		if uint64(bound)>>i&1 == 0 {
			continue
		}
		cl := []z.Lit{act.Not(), s[i]}
		for j := i + 1; j < len(s); j++ {
			if uint64(bound)>>j&1 == 0 {
				cl = append(cl, s[j])
			}
		}
		k.clause(cl...)
	}
}

// assumeChoice assumes choice (one entry per unit) on the variant
// literals of the units it is given for (those that have literals).
func (k *circuit) assumeChoice(choice []int, units []int) {
	for _, u := range units {
		for v, x := range k.x[u] {
			if v == choice[u] {
				k.g.Assume(x)
			} else {
				k.g.Assume(x.Not())
			}
		}
	}
}
