package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randKind returns a random small problem whose side constraints are all
// of one kind (kind 0: none but mandatory units; starKind: summary stars).
func randKind(r *rand.Rand, kind ConstraintKind) *Problem {
	p := randSmall(r, 10)
	p.Constraints = nil
	n := len(p.Units)
	if n < 2 {
		return p
	}
	id := func() string { return p.Units[r.IntN(n)].ID }
	grp := func() []string {
		var g []string
		for _, i := range r.Perm(n)[:1+r.IntN(min(n, 5))] {
			g = append(g, p.Units[i].ID)
		}
		return g
	}
	for c := 1 + r.IntN(n); c > 0; c-- {
		a, b := id(), id()
		for a == b {
			b = id()
		}
		switch kind {
		case KindRequires:
			p.Constraints = append(p.Constraints, Requires(a, b))
		case KindExcludes:
			p.Constraints = append(p.Constraints, Excludes(a, b))
		case KindAtMost:
			g := grp()
			p.Constraints = append(p.Constraints, AtMost(r.IntN(len(g)+1), g...))
		case KindSameChoice:
			p.Constraints = append(p.Constraints, SameChoice(grp()...))
		case starKind:
			for _, leaf := range grp() {
				if leaf != a {
					p.Constraints = append(p.Constraints, Excludes(a, leaf))
				}
			}
		case chainKind:
			return randChains(r, p)
		}
	}
	return p
}

// randChains gives p the shape of a contiguous window (see genWindow):
// one or two chains of requires over random runs of units (each requires
// the one before it), summaries that exclude runs of a chain, sometimes
// same_choice pairs along a chain, and a few constraints of other kinds
// across it.
func randChains(r *rand.Rand, p *Problem) *Problem {
	n := len(p.Units)
	perm := r.Perm(n)
	var chains [][]string
	for i := 0; i < n; {
		k := min(n-i, 2+r.IntN(5))
		if k < 2 {
			break
		}
		var c []string
		for _, u := range perm[i : i+k] {
			c = append(c, p.Units[u].ID)
		}
		chains = append(chains, c)
		i += k
		if r.IntN(2) == 0 {
			break
		}
	}
	inChain := map[string]bool{}
	for _, c := range chains {
		for j, id := range c {
			inChain[id] = true
			if j > 0 {
				p.Constraints = append(p.Constraints, Requires(id, c[j-1]))
			}
			if j > 0 && r.IntN(6) == 0 {
				p.Constraints = append(p.Constraints, SameChoice(id, c[j-1]))
			}
		}
	}
	id := func() string { return p.Units[r.IntN(n)].ID }
	for range 1 + r.IntN(3) {
		s := id()
		for tries := 0; inChain[s] && tries < 5; tries++ {
			s = id()
		}
		c := chains[r.IntN(len(chains))]
		from := r.IntN(len(c))
		to := min(len(c), from+1+r.IntN(3))
		for _, raw := range c[from:to] {
			if raw != s {
				p.Constraints = append(p.Constraints, Excludes(s, raw))
			}
		}
	}
	for range r.IntN(3) {
		a, b := id(), id()
		if a == b {
			continue
		}
		switch r.IntN(4) {
		case 0:
			p.Constraints = append(p.Constraints, Requires(a, b))
		case 1:
			p.Constraints = append(p.Constraints, Excludes(a, b))
		case 2:
			g := []string{a, b}
			if c := id(); c != a && c != b {
				g = append(g, c)
			}
			p.Constraints = append(p.Constraints, AtMost(1+r.IntN(2), g...))
		case 3:
			p.Constraints = append(p.Constraints, SameChoice(a, b))
		}
	}
	return p
}

// starKind asks randKind for summary stars: one unit excluding several;
// chainKind for chains of requires with summaries over them (randChains).
const (
	starKind  ConstraintKind = 100
	chainKind ConstraintKind = 101
)

// TestBruteForceEachKind checks Solve against brute force on small
// problems with one constraint kind at a time (and mandatory units), so
// that every kind is exercised on its own as well as mixed
// (TestSolveMatchesBruteForce).
func TestBruteForceEachKind(t *testing.T) {
	cases := 400
	if testing.Short() {
		cases = 100
	}
	for _, kind := range []ConstraintKind{0, KindRequires, KindExcludes, KindAtMost, KindSameChoice, starKind, chainKind} {
		name := kind.String()
		switch kind {
		case starKind:
			name = "stars"
		case chainKind:
			name = "chains"
		case 0:
			name = "mandatory"
		}
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(kind), 17))
			infeasible := 0
			for k := 0; k < cases; k++ {
				p := randKind(r, kind)
				wantU, wantW, feasible := bruteForce(p)
				sol, err := Solve(context.Background(), p, nil)
				if err != nil {
					t.Fatalf("case %d: %v\n%s", k, err, dump(p))
				}
				if !feasible {
					infeasible++
					if sol.Status != Infeasible {
						t.Fatalf("case %d: %v, want infeasible\n%s", k, sol.Status, dump(p))
					}
					checkConflict(t, k, p, sol.Conflict)
					continue
				}
				u, w, err := p.Evaluate(sol.Choice)
				if err != nil || sol.Status != Optimal || u != wantU || w != wantW {
					t.Fatalf("case %d: %v utility %d tokens %d (%v), want %d/%d\n%s", k, sol.Status, u, w, err, wantU, wantW, dump(p))
				}
			}
			t.Logf("%d cases, %d infeasible", cases, infeasible)
		})
	}
}

// TestProperties checks properties a caller relies on, on random small
// problems: more capacity never lowers the optimum; dropping a constraint
// never lowers it; listing the units in another order (same IDs and
// recency) gives the same utility and tokens.
func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 29))
	solve := func(p *Problem) Solution {
		t.Helper()
		sol, err := Solve(context.Background(), p, nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, dump(p))
		}
		return sol
	}
	for k := 0; k < 500; k++ {
		p := randSmall(r, 10)
		base := solve(p)
		if base.Status == Infeasible {
			continue
		}
		more := *p
		more.Capacity += int64(1 + r.IntN(20))
		if s := solve(&more); s.Status != Optimal || s.Utility < base.Utility {
			t.Fatalf("case %d: capacity %d → %d lowered utility %d → %d\n%s", k, p.Capacity, more.Capacity, base.Utility, s.Utility, dump(p))
		}
		if len(p.Constraints) > 0 {
			fewer := *p
			i := r.IntN(len(p.Constraints))
			fewer.Constraints = slices.Delete(slices.Clone(p.Constraints), i, i+1)
			if s := solve(&fewer); s.Utility < base.Utility {
				t.Fatalf("case %d: dropping %v lowered utility %d → %d\n%s", k, p.Constraints[i], base.Utility, s.Utility, dump(p))
			}
		}
		shuffled := *p
		shuffled.Units = slices.Clone(p.Units)
		r.Shuffle(len(shuffled.Units), func(i, j int) {
			shuffled.Units[i], shuffled.Units[j] = shuffled.Units[j], shuffled.Units[i]
		})
		if s := solve(&shuffled); s.Utility != base.Utility || s.Tokens != base.Tokens {
			t.Fatalf("case %d: reordering units changed utility/tokens %d/%d → %d/%d\n%s", k, base.Utility, base.Tokens, s.Utility, s.Tokens, dump(p))
		}
	}
}

// TestHardMixNeverBelowGreedy solves small cells of every mix of the
// benchmark set and checks what a caller relies on beyond validity: the
// pack is never worse than greedy newest-first, and the bound is proven.
func TestHardMixNeverBelowGreedy(t *testing.T) {
	for mix := range consNames {
		for _, c := range []struct {
			n        int
			capacity int64
		}{{512, 8_000}, {256, 128_000}, {1024, 128_000}} {
			t.Run(fmt.Sprintf("%s/n=%d/cap=%d", consNames[mix], c.n, c.capacity), func(t *testing.T) {
				p := genConversation(1, c.n, c.capacity, mix)
				sol, err := Solve(context.Background(), p, nil)
				if err != nil {
					t.Fatal(err)
				}
				g, _, _ := p.Evaluate(greedyNewestFirst(p))
				if _, _, err := p.Evaluate(sol.Choice); err != nil {
					t.Fatal(err)
				}
				if sol.Utility < g || sol.Bound < sol.Utility || sol.Status != Optimal {
					t.Fatalf("%v utility %d bound %d, greedy newest-first %d", sol.Status, sol.Utility, sol.Bound, g)
				}
			})
		}
	}
}
