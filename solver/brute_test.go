package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randSmall returns a random problem with at most maxUnits units, every
// constraint kind, ties in utility, mandatory units and tight capacities.
// The search space (product of options) stays small enough to enumerate.
func randSmall(r *rand.Rand, maxUnits int) *Problem {
	n := 1 + r.IntN(maxUnits)
	p := &Problem{}
	space := 1
	for i := 0; i < n; i++ {
		nv := 1 + r.IntN(3)
		for space*(nv+1) > 50000 && nv > 1 {
			nv--
		}
		space *= nv + 1
		u := Unit{ID: fmt.Sprintf("u%d", i), Order: int64(r.IntN(n)), Mandatory: r.IntN(8) == 0}
		for j := 0; j < nv; j++ {
			u.Variants = append(u.Variants, Variant{Kind: "v", Tokens: int64(r.IntN(12)), Utility: int64(r.IntN(10))})
		}
		p.Units = append(p.Units, u)
	}
	var total int64
	for _, u := range p.Units {
		total += u.Variants[0].Tokens
	}
	p.Capacity = int64(r.IntN(int(total) + 2))
	id := func() string { return p.Units[r.IntN(n)].ID }
	grp := func() []string {
		k := 1 + r.IntN(min(n, 4))
		perm := r.Perm(n)[:k]
		var g []string
		for _, i := range perm {
			g = append(g, p.Units[i].ID)
		}
		return g
	}
	if n >= 2 {
		nc := r.IntN(n + 2)
		for c := 0; c < nc; c++ {
			a, b := id(), id()
			for a == b {
				b = id()
			}
			switch r.IntN(6) {
			case 5: // a star: a summary excluding the raws it covers
				for _, leaf := range grp() {
					if leaf != a {
						p.Constraints = append(p.Constraints, Excludes(a, leaf))
					}
				}
			case 0, 1:
				p.Constraints = append(p.Constraints, Requires(a, b))
			case 2:
				p.Constraints = append(p.Constraints, Excludes(a, b))
			case 3:
				g := grp()
				p.Constraints = append(p.Constraints, AtMost(r.IntN(len(g)+1), g...))
			case 4:
				p.Constraints = append(p.Constraints, SameChoice(grp()...))
			}
		}
	}
	return p
}

// bruteForce enumerates every choice. It returns the optimum utility, the
// fewest tokens among optimal choices, and whether any choice is feasible.
func bruteForce(p *Problem) (bestU, bestW int64, feasible bool) {
	n := len(p.Units)
	idx := make(map[string]int, n)
	for i, u := range p.Units {
		idx[u.ID] = i
	}
	type con struct {
		kind ConstraintKind
		a, b int
		k    int
		g    []int
	}
	var cons []con
	for _, c := range p.Constraints {
		x := con{kind: c.Kind, a: idx[c.A], b: idx[c.B], k: c.K}
		for _, id := range c.Group {
			x.g = append(x.g, idx[id])
		}
		cons = append(cons, x)
	}
	choice := make([]int, n)
	ok := func() bool {
		for _, c := range cons {
			switch c.kind {
			case KindRequires:
				if choice[c.a] >= 0 && choice[c.b] < 0 {
					return false
				}
			case KindExcludes:
				if choice[c.a] >= 0 && choice[c.b] >= 0 {
					return false
				}
			case KindAtMost:
				k := 0
				for _, u := range c.g {
					if choice[u] >= 0 {
						k++
					}
				}
				if k > c.k {
					return false
				}
			case KindSameChoice:
				for _, u := range c.g {
					if (choice[u] >= 0) != (choice[c.g[0]] >= 0) {
						return false
					}
				}
			}
		}
		return true
	}
	var rec func(i int, u, w int64)
	rec = func(i int, u, w int64) {
		if w > p.Capacity {
			return
		}
		if i == n {
			if !ok() {
				return
			}
			if !feasible || u > bestU || (u == bestU && w < bestW) {
				bestU, bestW, feasible = u, w, true
			}
			return
		}
		start := -1
		if p.Units[i].Mandatory {
			start = 0
		}
		for c := start; c < len(p.Units[i].Variants); c++ {
			choice[i] = c
			if c < 0 {
				rec(i+1, u, w)
			} else {
				v := p.Units[i].Variants[c]
				rec(i+1, u+v.Utility, w+v.Tokens)
			}
		}
	}
	rec(0, 0, 0)
	return
}

// restrictTo returns p with only the conflict's mandatory units still
// mandatory and only its constraints.
func restrictTo(p *Problem, c *Conflict) *Problem {
	q := &Problem{Capacity: p.Capacity}
	for _, u := range p.Units {
		u.Mandatory = u.Mandatory && slices.Contains(c.Units, u.ID)
		q.Units = append(q.Units, u)
	}
	for _, i := range c.Constraints {
		q.Constraints = append(q.Constraints, p.Constraints[i])
	}
	return q
}

func TestSolveMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := 3000
	if testing.Short() {
		cases = 500
	}
	infeasible := 0
	for k := 0; k < cases; k++ {
		p := randSmall(r, 12)
		wantU, wantW, feasible := bruteForce(p)
		sol, err := Solve(context.Background(), p, nil)
		if err != nil {
			t.Fatalf("case %d: Solve: %v\n%s", k, err, dump(p))
		}
		if !feasible {
			infeasible++
			if sol.Status != Infeasible {
				t.Fatalf("case %d: status %v, want infeasible\n%s", k, sol.Status, dump(p))
			}
			checkConflict(t, k, p, sol.Conflict)
			continue
		}
		if sol.Status != Optimal {
			t.Fatalf("case %d: status %v, want optimal\n%s", k, sol.Status, dump(p))
		}
		u, w, err := p.Evaluate(sol.Choice)
		if err != nil {
			t.Fatalf("case %d: invalid choice %v: %v\n%s", k, sol.Choice, err, dump(p))
		}
		if u != sol.Utility || w != sol.Tokens {
			t.Fatalf("case %d: totals %d/%d, reported %d/%d", k, u, w, sol.Utility, sol.Tokens)
		}
		if u != wantU || w != wantW || sol.Bound != wantU {
			t.Fatalf("case %d: got utility %d tokens %d bound %d, want %d/%d\n%s", k, u, w, sol.Bound, wantU, wantW, dump(p))
		}
		// Starved of DP states and nodes the answer may be Feasible, but
		// the pack must be valid and the bound must still be proven.
		for _, o := range []Options{{MaxStates: 3}, {MaxNodes: 1}} {
			cut, err := Solve(context.Background(), p, &o)
			if err != nil {
				t.Fatal(err)
			}
			u, _, err := p.Evaluate(cut.Choice)
			if err != nil || u != cut.Utility || u > wantU || cut.Bound < wantU || (cut.Status == Optimal && u != wantU) || (cut.Status == Feasible && cut.Stats.Limit == LimitNone) {
				t.Fatalf("case %d with %+v: %v (limit %v) utility %d bound %d (err %v), optimum %d\n%s", k, o, cut.Status, cut.Stats.Limit, cut.Utility, cut.Bound, err, wantU, dump(p))
			}
		}
	}
	t.Logf("%d cases, %d infeasible", cases, infeasible)
}

func checkConflict(t *testing.T, k int, p *Problem, c *Conflict) {
	t.Helper()
	if c == nil {
		t.Fatalf("case %d: infeasible without conflict\n%s", k, dump(p))
	}
	if _, _, ok := bruteForce(restrictTo(p, c)); ok {
		t.Fatalf("case %d: conflict %v is not a contradiction\n%s", k, c, dump(p))
	}
	for i := range c.Units {
		d := *c
		d.Units = slices.Delete(slices.Clone(c.Units), i, i+1)
		if _, _, ok := bruteForce(restrictTo(p, &d)); !ok {
			t.Fatalf("case %d: conflict %v not minimal: unit %s is redundant\n%s", k, c, c.Units[i], dump(p))
		}
	}
	for i := range c.Constraints {
		d := *c
		d.Constraints = slices.Delete(slices.Clone(c.Constraints), i, i+1)
		if _, _, ok := bruteForce(restrictTo(p, &d)); !ok {
			t.Fatalf("case %d: conflict %v not minimal: constraint %d is redundant\n%s", k, c, c.Constraints[i], dump(p))
		}
	}
}

func dump(p *Problem) string {
	s := fmt.Sprintf("capacity %d\n", p.Capacity)
	for _, u := range p.Units {
		s += fmt.Sprintf("  %s order=%d mandatory=%v %v\n", u.ID, u.Order, u.Mandatory, u.Variants)
	}
	for i, c := range p.Constraints {
		s += fmt.Sprintf("  [%d] %v\n", i, c)
	}
	return s
}

// TestExtremeValues runs small problems with tokens, utilities and
// capacity near the input limits against brute force, to catch overflow in
// the scaled arithmetic.
func TestExtremeValues(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 300; k++ {
		p := randSmall(r, 8)
		for i := range p.Units {
			for j := range p.Units[i].Variants {
				v := &p.Units[i].Variants[j]
				v.Tokens = v.Tokens*(MaxValue/12) + int64(r.IntN(1000))
				v.Utility = min(MaxValue, v.Utility*(MaxValue/10)+int64(r.IntN(1000)))
			}
		}
		p.Capacity = min(MaxValue, p.Capacity*(MaxValue/12))
		wantU, _, feasible := bruteForce(p)
		sol, err := Solve(context.Background(), p, nil)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		if !feasible {
			if sol.Status != Infeasible {
				t.Fatalf("case %d: %v, want infeasible\n%s", k, sol.Status, dump(p))
			}
			continue
		}
		u, _, err := p.Evaluate(sol.Choice)
		if err != nil || sol.Status != Optimal || u != wantU || sol.Bound != wantU {
			t.Fatalf("case %d: %v utility %d bound %d (%v), want %d\n%s", k, sol.Status, u, sol.Bound, err, wantU, dump(p))
		}
	}
	// A large instance at the total-utility limit must not overflow.
	p := &Problem{Capacity: MaxValue}
	for i := 0; i < 1000; i++ {
		p.Units = append(p.Units, Unit{ID: fmt.Sprint(i), Order: int64(i), Variants: []Variant{
			{Tokens: MaxValue / 400, Utility: MaxValue - int64(i)},
			{Tokens: MaxValue / 4000, Utility: MaxValue / 3},
		}})
	}
	sol, err := Solve(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Evaluate(sol.Choice); err != nil || sol.Bound < sol.Utility {
		t.Fatalf("%v: %v utility %d bound %d", err, sol.Status, sol.Utility, sol.Bound)
	}
}
