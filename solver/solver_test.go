package solver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func v(tokens, utility int64) Variant {
	return Variant{Kind: "verbatim", Tokens: tokens, Utility: utility}
}

func TestValidate(t *testing.T) {
	ok := func() *Problem {
		return &Problem{Capacity: 10, Units: []Unit{
			{ID: "a", Variants: []Variant{v(1, 1)}},
			{ID: "b", Variants: []Variant{v(1, 1)}},
		}}
	}
	tests := []struct {
		name string
		edit func(p *Problem)
		want string
	}{
		{"negative capacity", func(p *Problem) { p.Capacity = -1 }, "solver: Capacity: must be in [0, 1000000000000] (got -1)"},
		{"empty id", func(p *Problem) { p.Units[1].ID = "" }, "solver: Units[1].ID: must be non-empty"},
		{"duplicate id", func(p *Problem) { p.Units[1].ID = "a" }, `solver: Units[1].ID: duplicate of Units[0] ("a")`},
		{"no variants", func(p *Problem) { p.Units[0].Variants = nil }, "solver: Units[0].Variants: must have 1..16 variants (got 0)"},
		{"negative tokens", func(p *Problem) { p.Units[1].Variants[0].Tokens = -1 }, "solver: Units[1].Variants[0].Tokens: must be in [0, 1000000000000] (got -1)"},
		{"negative utility", func(p *Problem) { p.Units[0].Variants[0].Utility = -5 }, "solver: Units[0].Variants[0].Utility: must be in [0, 1000000000000] (got -5)"},
		{"unknown A", func(p *Problem) { p.Constraints = []Constraint{Requires("x", "b")} }, `solver: Constraints[0].A: unknown unit "x"`},
		{"unknown B", func(p *Problem) { p.Constraints = []Constraint{Excludes("a", "y")} }, `solver: Constraints[0].B: unknown unit "y"`},
		{"self requires", func(p *Problem) { p.Constraints = []Constraint{Requires("a", "a")} }, `solver: Constraints[0].B: must differ from A (got "a")`},
		{"negative K", func(p *Problem) { p.Constraints = []Constraint{AtMost(-1, "a")} }, "solver: Constraints[0].K: must be >= 0 (got -1)"},
		{"empty group", func(p *Problem) { p.Constraints = []Constraint{SameChoice()} }, "solver: Constraints[0].Group: must be non-empty"},
		{"group unknown", func(p *Problem) { p.Constraints = []Constraint{AtMost(1, "a", "z")} }, `solver: Constraints[0].Group[1]: unknown unit "z"`},
		{"group duplicate", func(p *Problem) { p.Constraints = []Constraint{SameChoice("a", "b", "a")} }, `solver: Constraints[0].Group[2]: duplicate unit "a"`},
		{"bad kind", func(p *Problem) { p.Constraints = []Constraint{{Kind: 99}} }, "solver: Constraints[0].Kind: unknown kind 99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ok()
			tc.edit(p)
			_, err := Solve(context.Background(), p, nil)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Solve error = %v, want %q", err, tc.want)
			}
		})
	}
	for _, o := range []struct {
		field string
		opts  Options
	}{
		{"MaxStates", Options{MaxStates: -1}},
		{"MaxNodes", Options{MaxNodes: -1}},
		{"MaxWork", Options{MaxWork: -1}},
	} {
		if _, err := Solve(context.Background(), ok(), &o.opts); err == nil || !strings.Contains(err.Error(), "Options."+o.field) {
			t.Errorf("Solve with %s -1: error = %v", o.field, err)
		}
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{Optimal: "optimal", Feasible: "feasible", Infeasible: "infeasible", 0: "Status(0)"} {
		if got := s.String(); got != want {
			t.Errorf("Status(%d).String() = %q, want %q", s, got, want)
		}
	}
	for l, want := range map[Limit]string{LimitNone: "none", LimitWork: "work", LimitNodes: "nodes", LimitStates: "states", LimitTime: "time", 9: "Limit(9)"} {
		if got := l.String(); got != want {
			t.Errorf("Limit(%d).String() = %q, want %q", l, got, want)
		}
	}
	if got := AtMost(2, "a", "b").String(); got != "at_most(2, [a, b])" {
		t.Errorf("AtMost.String() = %q", got)
	}
}

// TestMatchesReferenceDP compares unconstrained random problems (and
// generated conversations at small capacities) with the textbook DP.
func TestMatchesReferenceDP(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 300; k++ {
		n := 1 + r.IntN(80)
		p := &Problem{Capacity: int64(r.IntN(3000))}
		for i := 0; i < n; i++ {
			u := Unit{ID: fmt.Sprint(i), Order: int64(i), Mandatory: r.IntN(20) == 0}
			for j := 1 + r.IntN(4); j > 0; j-- {
				u.Variants = append(u.Variants, v(int64(r.IntN(400)), int64(r.IntN(5000))))
			}
			p.Units = append(p.Units, u)
		}
		want, feasible := referenceDP(p)
		sol, err := Solve(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !feasible {
			if sol.Status != Infeasible {
				t.Fatalf("case %d: status %v, want infeasible", k, sol.Status)
			}
			continue
		}
		if sol.Status != Optimal || sol.Utility != want {
			t.Fatalf("case %d: %v utility %d, reference DP %d\n%s", k, sol.Status, sol.Utility, want, dump(p))
		}
		if _, _, err := p.Evaluate(sol.Choice); err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		for _, n := range []int{128, 512} {
			p := genConversation(seed, n, 8000, consNone)
			want, _ := referenceDP(p)
			sol, err := Solve(context.Background(), p, nil)
			if err != nil || sol.Status != Optimal || sol.Utility != want {
				t.Fatalf("conversation seed %d n %d: %v %v utility %d, reference DP %d", seed, n, err, sol.Status, sol.Utility, want)
			}
		}
	}
}

func TestTieBreakFewerTokens(t *testing.T) {
	// Both packs are worth 10; the one with fewer tokens wins.
	p := &Problem{Capacity: 10, Units: []Unit{
		{ID: "old", Order: 1, Variants: []Variant{v(6, 10)}},
		{ID: "new", Order: 2, Variants: []Variant{v(4, 10)}},
	}, Constraints: []Constraint{Excludes("old", "new")}}
	sol, err := Solve(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{-1, 0}; !slices.Equal(sol.Choice, want) {
		t.Fatalf("Choice = %v, want %v", sol.Choice, want)
	}
}

func TestInfeasible(t *testing.T) {
	tests := []struct {
		name string
		p    *Problem
		want Conflict
	}{
		{
			name: "system prompt alone exceeds capacity",
			p: &Problem{Capacity: 100, Units: []Unit{
				{ID: "sys", Mandatory: true, Variants: []Variant{v(150, 1)}},
				{ID: "m1", Mandatory: true, Variants: []Variant{v(10, 1)}},
				{ID: "m2", Variants: []Variant{v(10, 1)}},
			}},
			want: Conflict{Units: []string{"sys"}, Excess: 60},
		},
		{
			name: "mandatory summary excludes mandatory raw",
			p: &Problem{Capacity: 100, Units: []Unit{
				{ID: "raw", Mandatory: true, Variants: []Variant{v(10, 1)}},
				{ID: "x", Mandatory: true, Variants: []Variant{v(10, 1)}},
				{ID: "sum", Mandatory: true, Variants: []Variant{v(5, 1)}},
			}, Constraints: []Constraint{Excludes("sum", "x"), Excludes("sum", "raw"), Requires("x", "raw")}},
			want: Conflict{Units: []string{"x", "sum"}, Constraints: []int{0}},
		},
		{
			name: "requires chain to a unit that cannot fit",
			p: &Problem{Capacity: 50, Units: []Unit{
				{ID: "call", Variants: []Variant{v(40, 1)}},
				{ID: "result", Mandatory: true, Variants: []Variant{v(20, 1), v(15, 1)}},
				{ID: "other", Mandatory: true, Variants: []Variant{v(1, 1)}},
			}, Constraints: []Constraint{Requires("result", "call")}},
			want: Conflict{Units: []string{"result"}, Constraints: []int{0}, Excess: 6},
		},
		{
			name: "at most zero of a mandatory group",
			p: &Problem{Capacity: 50, Units: []Unit{
				{ID: "a", Variants: []Variant{v(1, 1)}},
				{ID: "b", Mandatory: true, Variants: []Variant{v(1, 1)}},
			}, Constraints: []Constraint{SameChoice("a", "b"), AtMost(1, "a", "b")}},
			want: Conflict{Units: []string{"b"}, Constraints: []int{0, 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sol, err := Solve(context.Background(), tc.p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sol.Status != Infeasible || sol.Conflict == nil || sol.Choice != nil {
				t.Fatalf("got %v %v, want infeasible", sol.Status, sol.Conflict)
			}
			got := *sol.Conflict
			if !slices.Equal(got.Units, tc.want.Units) || !slices.Equal(got.Constraints, tc.want.Constraints) || got.Excess != tc.want.Excess {
				t.Fatalf("Conflict = %v (excess %d), want %v (excess %d)", got.String(), got.Excess, tc.want.String(), tc.want.Excess)
			}
			checkConflict(t, 0, tc.p, sol.Conflict)
		})
	}
}

func TestDeadline(t *testing.T) {
	// A hard instance that the default limit cannot prove: under a short
	// limit the result is a valid pack with a proven bound. (How long the
	// uninterruptible presolve takes is for the benchmarks, not a test: it
	// varies tenfold under -race on a shared machine.)
	p := genConversation(1, 10000, 1_000_000, consHard)
	sol, err := Solve(context.Background(), p, &Options{TimeLimit: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Evaluate(sol.Choice); err != nil {
		t.Fatal(err)
	}
	if sol.Bound < sol.Utility || (sol.Status != Feasible && sol.Status != Optimal) {
		t.Fatalf("status %v utility %d bound %d", sol.Status, sol.Utility, sol.Bound)
	}
	if sol.Status == Feasible && sol.Stats.Limit != LimitTime {
		t.Fatalf("feasible under a time limit: Stats.Limit = %v, want time", sol.Stats.Limit)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Solve(ctx, p, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: error = %v", err)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := Solve(ctx, p, nil); !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired: error = %v", err)
	}
}

func TestNoGoroutinesLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	for seed := uint64(1); seed <= 3; seed++ {
		if _, err := Solve(context.Background(), genConversation(seed, 512, 8000, consFull), nil); err != nil {
			t.Fatal(err)
		}
		p := &Problem{Capacity: 1, Units: []Unit{{ID: "a", Mandatory: true, Variants: []Variant{v(1, 1)}}, {ID: "b", Mandatory: true, Variants: []Variant{v(0, 1)}}}, Constraints: []Constraint{Excludes("a", "b")}}
		if _, err := Solve(context.Background(), p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("goroutines: %d before, %d after", before, after)
	}
}

func TestEvaluate(t *testing.T) {
	p := &Problem{Capacity: 5, Units: []Unit{
		{ID: "a", Mandatory: true, Variants: []Variant{v(3, 1)}},
		{ID: "b", Variants: []Variant{v(3, 1)}},
	}, Constraints: []Constraint{Requires("b", "a")}}
	for _, tc := range []struct {
		choice []int
		want   string
	}{
		{[]int{0}, "choice has 1 entries"},
		{[]int{1, -1}, "variant 1 out of range"},
		{[]int{-1, -1}, "mandatory unit \"a\" omitted"},
		{[]int{0, 0}, "exceed capacity"},
	} {
		if _, _, err := p.Evaluate(tc.choice); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Evaluate(%v) = %v, want %q", tc.choice, err, tc.want)
		}
	}
	if u, w, err := p.Evaluate([]int{0, -1}); err != nil || u != 1 || w != 3 {
		t.Errorf("Evaluate = %d, %d, %v", u, w, err)
	}
}
