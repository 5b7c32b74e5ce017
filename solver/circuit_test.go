package solver

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCircuitSums checks the pseudo-Boolean sums against arithmetic: with
// every variant assumed, S ≤ bound and S ≥ bound hold in gini exactly when
// they hold for the pack's tokens.
func TestCircuitSums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for k := 0; k < 3000; k++ {
		p := randSmall(r, 8)
		idx, _ := p.validate()
		choice := make([]int, len(p.Units))
		var units []int
		var tok int64
		for i, u := range p.Units {
			choice[i] = r.IntN(len(u.Variants)+1) - 1
			if choice[i] >= 0 {
				tok += u.Variants[choice[i]].Tokens
			}
			units = append(units, i)
		}
		bound := int64(r.IntN(70)) - 2
		for _, leq := range []bool{true, false} {
			kc := compile(p, idx, true, units)
			act := kc.c.Lit()
			s := kc.sum(units, func(u, v int) int64 { return p.Units[u].Variants[v].Tokens })
			want := tok >= bound
			if leq {
				kc.atMost(act, s, bound)
				want = tok <= bound
			} else {
				kc.atLeast(act, s, bound)
			}
			kc.assumeChoice(choice, units)
			kc.g.Assume(act)
			if got := kc.g.Solve() == 1; got != want {
				t.Fatalf("case %d: tokens %d, bound %d, at most %v: gini says %v", k, tok, bound, leq, got)
			}
		}
	}
}

// TestCheckRejects breaks optimal packs of random problems one rule at a
// time and checks that the gini check names a violated rule.
func TestCheckRejects(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	rejected := map[string]int{}
	for k := 0; k < 3000; k++ {
		p := randSmall(r, 10)
		idx, err := p.validate()
		if err != nil {
			t.Fatal(err)
		}
		sol, err := Solve(t.Context(), p, nil)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		if sol.Status == Infeasible {
			continue
		}
		all := make([]int, len(p.Units))
		for i := range all {
			all[i] = i
		}
		if err := check(p, idx, sol.Choice, all); err != nil {
			t.Fatalf("case %d: a valid pack fails the check: %v", k, err)
		}
		// Flip one unit; whatever Evaluate rejects, check must reject.
		bad := append([]int(nil), sol.Choice...)
		u := r.IntN(len(bad))
		bad[u] = r.IntN(len(p.Units[u].Variants)+1) - 1
		_, _, evalErr := p.Evaluate(bad)
		err = check(p, idx, bad, all[:r.IntN(len(all)+1)])
		switch {
		case evalErr == nil && err != nil:
			t.Fatalf("case %d: valid pack %v rejected: %v", k, bad, err)
		case evalErr != nil && err == nil:
			t.Fatalf("case %d: invalid pack %v (%v) accepted\n%s", k, bad, evalErr, dump(p))
		case err != nil:
			if !errors.Is(err, ErrInternal) {
				t.Fatalf("case %d: %v does not wrap ErrInternal", k, err)
			}
			for _, what := range []string{"capacity", "mandatory", "requires", "excludes", "at_most", "same_choice"} {
				if strings.Contains(err.Error(), what) {
					rejected[what]++
				}
			}
		}
	}
	for _, what := range []string{"capacity", "mandatory", "requires", "excludes", "at_most", "same_choice"} {
		if rejected[what] == 0 {
			t.Errorf("no pack was rejected for %s; the test no longer covers it", what)
		}
	}
	t.Logf("rejections: %v", rejected)
}
