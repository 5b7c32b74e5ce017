package solver_test

import (
	"context"
	"fmt"

	"github.com/rlmpl/rlmpl/solver"
)

func ExampleSolve() {
	p := &solver.Problem{
		Capacity: 1000,
		Units: []solver.Unit{
			{ID: "system", Order: 0, Mandatory: true, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 200, Utility: 1_000_000}}},
			{ID: "call", Order: 1, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 50, Utility: 1000}}},
			{ID: "result", Order: 2, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 600, Utility: 3000}}},
			{ID: "summary", Order: 3, Variants: []solver.Variant{{Kind: "summary", Tokens: 100, Utility: 2500}}},
			{ID: "warm", Order: 4, Variants: []solver.Variant{
				{Kind: "verbatim", Tokens: 500, Utility: 9000},
				{Kind: "compact_summary", Tokens: 100, Utility: 5000},
			}},
			{ID: "last", Order: 5, Mandatory: true, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 100, Utility: 2_000_000}}},
		},
		Constraints: []solver.Constraint{
			solver.SameChoice("call", "result"),
			solver.Excludes("summary", "call"),
			solver.Excludes("summary", "result"),
		},
	}
	sol, err := solver.Solve(context.Background(), p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sol.Status, sol.Utility, sol.Tokens, sol.Bound)
	for i, c := range sol.Choice {
		if c < 0 {
			fmt.Printf("%s: omitted\n", p.Units[i].ID)
		} else {
			fmt.Printf("%s: %s\n", p.Units[i].ID, p.Units[i].Variants[c].Kind)
		}
	}
	// Output:
	// optimal 3011500 900 3011500
	// system: verbatim
	// call: omitted
	// result: omitted
	// summary: summary
	// warm: verbatim
	// last: verbatim
}

func ExampleSolve_infeasible() {
	p := &solver.Problem{
		Capacity: 300,
		Units: []solver.Unit{
			{ID: "system", Mandatory: true, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 200, Utility: 1}}},
			{ID: "result", Mandatory: true, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 80, Utility: 1}}},
			{ID: "call", Variants: []solver.Variant{{Kind: "verbatim", Tokens: 70, Utility: 1}}},
		},
		Constraints: []solver.Constraint{solver.Requires("result", "call")},
	}
	sol, err := solver.Solve(context.Background(), p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sol.Status)
	fmt.Println(sol.Conflict)
	for _, i := range sol.Conflict.Constraints {
		fmt.Println(p.Constraints[i])
	}
	// Output:
	// infeasible
	// units [system result], constraints [0], 50 tokens over capacity
	// requires(result, call)
}
