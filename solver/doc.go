// Package solver is the pack optimizer: a multiple-choice knapsack with
// admissibility constraints, solved to proven optimality.
//
// # What it owns
//
// A [Problem] is a list of units (messages, warm artifacts, the boundary,
// sections), each with 1..[MaxVariants] variants {Kind, Tokens, Utility};
// non-mandatory units may also be omitted. [Solve] chooses one variant or
// omission per unit to maximise total utility subject to total tokens ≤
// Capacity, mandatory units, and the constraints [Requires], [Excludes],
// [AtMost] and [SameChoice]. The result is a [Solution] with a [Status]:
//
//   - [Optimal]: proven optimal (Bound == Utility);
//   - [Feasible]: a limit stopped the search (Stats.Limit names it); the
//     pack is valid and Bound is a proven upper bound on the optimum;
//   - [Infeasible]: nothing satisfies the mandatory units, constraints and
//     capacity; Conflict names a subset-minimal set of mandatory units and
//     constraints that cannot hold together, and the token excess.
//
// The package is pure Go over github.com/go-air/gini and imports nothing
// else from rlmpl. Deciding what the units are worth, which constraints
// apply and what to do about an infeasible pack is left to the caller (the
// Prolog policy layer); [Problem.Evaluate] checks any choice against a
// problem.
//
// # How it solves
//
// The pipeline follows reference/solver-notes.md:
//
//  1. Validate; merge units that must be selected together (same_choice
//     groups and cycles of requires, such as a tool call and its result)
//     into multiple-choice items whose options are the Pareto-optimal
//     combinations of their members' variants; restate the constraints
//     between items; propagate mandatory units, requires, excludes and
//     saturated at_most groups.
//  2. Bound: the Lagrangian relaxation λ·C + μ·K + Σ max(u − λ·w − μ·groups),
//     with "stars" (a summary excluding the raws it covers) kept exact and
//     multipliers μ for at_most groups found by coordinate ternary search,
//     in exact scaled integer arithmetic. Incumbents: a constraint-aware LP
//     greedy, the newest-first greedy and a star-mode Lagrangian greedy.
//  3. Reduced-cost fixing against the incumbent shrinks the problem to a
//     core of undecided items.
//  4. An exact DP over the core: Pareto lists of (tokens, utility) states,
//     pruned by the bound against a target guessed from just below the
//     bound (a DP that finds nothing lowers the bound; one that finds a
//     solution has found the relaxation's optimum), stars solved exactly.
//     Where the core is a multiple-choice knapsack (no side constraints,
//     or only same_choice/mutual requires, which are merged) this is the
//     proof. If a pass would keep more than Options.MaxStates states it is
//     redone without back-pointers, which still bounds the node.
//  5. Otherwise best-first branch and bound on the items of violated
//     constraints (and on members of at_most groups a multiplier leaves
//     short), with that DP as the relaxation at every node.
//  6. Infeasibility: the forced content (the closure of the mandatory units
//     under requires and same_choice) is checked; a logical conflict is
//     narrowed by gini's failed assumptions (one assumption literal per
//     mandatory unit and constraint over the Boolean encoding, Why), and
//     deletion makes it subset-minimal.
//
// gini is not used to optimise: measured on these problems (see
// reference/solver-notes.md and BenchmarkSolve), knapsack optimality proofs
// by CDCL stop scaling at a few dozen core items, while the DP certificate
// has no such ceiling.
//
// # Ties and determinism
//
// Solve is deterministic: the same problem and options give the same
// Solution (but for Stats.Elapsed) on any machine, under any load. The
// limits that stop a search early are work budgets counted in work units
// (Options.MaxWork: DP states, multiplier evaluations, search nodes;
// Options.MaxNodes; Options.MaxStates), never time. The wall clock
// (Options.TimeLimit, the context's deadline) is only a safety net, ten
// times the default work budget; when it cuts a search the result may
// differ between runs, and Stats.Limit says [LimitTime]. Among packs of maximal utility it returns one with the fewest
// tokens. Remaining ties are broken by a fixed processing order (items by
// decreasing regret under the multipliers, then by Order, oldest first;
// within an item the richer option wins), which is deterministic but not a
// user-facing preference. The fewest-tokens rule is exact except when an
// at_most multiplier decides the node, where it is best effort.
//
// # Concurrency
//
// Solve keeps no global state, builds everything per call, starts no
// goroutines and does not retain or modify the Problem. It is safe to call
// from any number of goroutines at once.
//
// # Usage
//
//	p := &solver.Problem{
//		Capacity: 300_000,
//		Units: []solver.Unit{
//			{ID: "system", Mandatory: true, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 800, Utility: 10_000_000}}},
//			{ID: "m1", Order: 1, Variants: []solver.Variant{{Kind: "verbatim", Tokens: 50, Utility: 1001}}},
//			// ...
//		},
//		Constraints: []solver.Constraint{solver.Requires("result7", "call7")},
//	}
//	sol, err := solver.Solve(ctx, p, nil)
//	if err != nil {
//		return err // invalid problem, cancelled, or deadline already passed
//	}
//	switch sol.Status {
//	case solver.Infeasible:
//		return fmt.Errorf("pack: %v", sol.Conflict)
//	case solver.Feasible:
//		// valid pack; optimum is at most sol.Bound
//	}
//	for i, c := range sol.Choice { /* c == -1: p.Units[i] omitted */ }
package solver
