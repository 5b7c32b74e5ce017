package solver

import (
	"context"
	"testing"
)

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		p      *Problem
		status Status
		util   int64
	}{
		{"no units", &Problem{}, Optimal, 0},
		{"zero capacity", &Problem{Units: []Unit{{ID: "a", Variants: []Variant{v(1, 5), v(0, 2)}}}}, Optimal, 2},
		{"zero capacity mandatory", &Problem{Units: []Unit{{ID: "a", Mandatory: true, Variants: []Variant{v(1, 5)}}}}, Infeasible, 0},
		{"zero utility", &Problem{Capacity: 5, Units: []Unit{{ID: "a", Variants: []Variant{v(1, 0)}}}}, Optimal, 0},
		{"at most zero", &Problem{Capacity: 5, Units: []Unit{{ID: "a", Variants: []Variant{v(1, 3)}}, {ID: "b", Variants: []Variant{v(1, 4)}}}, Constraints: []Constraint{AtMost(0, "a", "b")}}, Optimal, 0},
		{"requires cycle", &Problem{Capacity: 5, Units: []Unit{{ID: "a", Variants: []Variant{v(2, 3)}}, {ID: "b", Variants: []Variant{v(2, 4)}}, {ID: "c", Variants: []Variant{v(2, 4)}}}, Constraints: []Constraint{Requires("a", "b"), Requires("b", "c"), Requires("c", "a")}}, Optimal, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sol, err := Solve(context.Background(), tc.p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sol.Status != tc.status || sol.Utility != tc.util {
				t.Fatalf("got %v utility %d, want %v %d", sol.Status, sol.Utility, tc.status, tc.util)
			}
			if sol.Status != Infeasible {
				if _, _, err := tc.p.Evaluate(sol.Choice); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
