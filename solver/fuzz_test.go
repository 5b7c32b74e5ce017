package solver

import (
	"context"
	"fmt"
	"testing"
)

// decodeProblem turns fuzz bytes into a small valid problem (at most 10
// units, 3 variants each), reading zeros once the input runs out.
func decodeProblem(data []byte) *Problem {
	pos := 0
	next := func() int {
		if pos >= len(data) {
			return 0
		}
		pos++
		return int(data[pos-1])
	}
	n := 1 + next()%10
	p := &Problem{}
	for i := 0; i < n; i++ {
		flags := next()
		u := Unit{ID: fmt.Sprintf("u%d", i), Order: int64(next() % 8), Mandatory: flags&1 != 0}
		for j := 0; j <= (flags>>1)%3; j++ {
			u.Variants = append(u.Variants, Variant{Kind: "v", Tokens: int64(next() % 40), Utility: int64(next() % 50)})
		}
		p.Units = append(p.Units, u)
	}
	p.Capacity = int64(next() * 2)
	id := func() string { return p.Units[next()%n].ID }
	for c := next() % 12; c > 0; c-- {
		kind := next() % 4
		switch kind {
		case 0, 1:
			a, b := id(), id()
			if a == b {
				continue
			}
			if kind == 0 {
				p.Constraints = append(p.Constraints, Requires(a, b))
			} else {
				p.Constraints = append(p.Constraints, Excludes(a, b))
			}
		case 2, 3:
			var g []string
			seen := map[string]bool{}
			for k := 1 + next()%4; k > 0; k-- {
				if x := id(); !seen[x] {
					seen[x] = true
					g = append(g, x)
				}
			}
			if kind == 2 {
				p.Constraints = append(p.Constraints, AtMost(next()%3, g...))
			} else {
				p.Constraints = append(p.Constraints, SameChoice(g...))
			}
		}
	}
	return p
}

// FuzzSolve checks that Solve never panics, that every returned choice
// satisfies the constraints and the capacity (by Evaluate, and by gini
// against the compiled model with every unit in the capacity sum), that
// Optimal agrees with brute force, and that Infeasible comes with a sound,
// minimal conflict.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 0, 10, 20, 0, 1, 5, 5, 2, 2, 7, 9, 30, 4, 0, 1, 1, 2, 0, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := decodeProblem(data)
		sol, err := Solve(context.Background(), p, nil)
		if err != nil {
			t.Fatalf("Solve: %v\n%s", err, dump(p))
		}
		wantU, _, feasible := bruteForce(p)
		if sol.Status == Infeasible {
			if feasible {
				t.Fatalf("infeasible, but brute force finds utility %d\n%s", wantU, dump(p))
			}
			checkConflict(t, 0, p, sol.Conflict)
			return
		}
		u, w, err := p.Evaluate(sol.Choice)
		if err != nil {
			t.Fatalf("invalid choice %v: %v\n%s", sol.Choice, err, dump(p))
		}
		ginicheck(t, p, sol.Choice)
		if u != sol.Utility || w != sol.Tokens || sol.Bound < u {
			t.Fatalf("totals %d/%d reported %d/%d bound %d", u, w, sol.Utility, sol.Tokens, sol.Bound)
		}
		if sol.Status == Optimal && u != wantU {
			t.Fatalf("optimal utility %d, brute force %d\n%s", u, wantU, dump(p))
		}
		// Work limits may cut the search; the pack and bound stay sound.
		o := &Options{MaxStates: 1 + len(data)%7, MaxNodes: 1 + len(data)%3, MaxWork: 2_000_000}
		cut, err := Solve(context.Background(), p, o)
		if err != nil {
			t.Fatal(err)
		}
		ginicheck(t, p, cut.Choice)
		cu, _, err := p.Evaluate(cut.Choice)
		if err != nil || cu != cut.Utility || cut.Bound < wantU || (cut.Status == Optimal && cu != wantU) || (cut.Status == Feasible && cut.Stats.Limit == LimitNone) {
			t.Fatalf("with %+v: %v utility %d bound %d (%v), optimum %d\n%s", *o, cut.Status, cut.Utility, cut.Bound, err, wantU, dump(p))
		}
	})
}

// ginicheck checks a pack with gini against the compiled model of p, with
// every unit in the capacity's pseudo-Boolean sum.
func ginicheck(t *testing.T, p *Problem, choice []int) {
	t.Helper()
	idx, err := p.validate()
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, len(p.Units))
	for i := range all {
		all[i] = i
	}
	if err := check(p, idx, choice, all); err != nil {
		t.Fatalf("gini check: %v\n%s", err, dump(p))
	}
}
