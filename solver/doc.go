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
// The pipeline (reference/solver-notes.md, then issue #17):
//
//  1. Validate; merge units that must be selected together (same_choice
//     groups and cycles of requires, such as a tool call and its result)
//     into multiple-choice items whose options are the Pareto-optimal
//     combinations of their members' variants; restate the constraints
//     between items; propagate mandatory units, requires, excludes and
//     saturated at_most groups; find the chains of one-way requires (each
//     link the only requires of its requirer and the only one on its
//     target: a contiguous window's exchanges, each requiring the next
//     newer one), whose selected members are a prefix (model.go).
//  2. Bound: the LP relaxation (lp.go) and the Lagrangian relaxation
//     λ·C + μ·K + Σ max(u − λ·w − μ·groups) with "stars" (a summary
//     excluding the raws it covers) kept exact and multipliers μ for the
//     at_most groups (lagrange.go), in exact scaled integer arithmetic;
//     with stars the capacity multiplier λ is tuned too, from 0 up (the
//     LP's ignores the exclusions and can be far too high).
//     Incumbents: an LP greedy, newest-first and a star-mode greedy.
//  3. Reduced-cost fixing (fix.go): an option goes if the bound with it
//     forced falls below the incumbent, first under the Lagrangian bound,
//     then under the DP's own first-layer bound (below).
//  4. A beam DP (the exact DP keeping a few states per bucket) improves
//     the incumbent, and fixing runs again after each improvement
//     (incumbent.go).
//  5. The exact DP over the core (core.go, dp.go): Pareto lists of
//     (tokens, utility) states in buckets. A bucket holds frontier bits,
//     which enforce exclusions exactly (summary stars, and chains of them
//     linked by tool pairs that straddle two summaries' ranges) and the
//     chains of requires (one bit per chain: closed, once a member was
//     left out; a summary of a chain's raws is attached to the newest
//     raw it covers and needs the chain closed there, its other
//     exclusions being implied), and the counts of selected members of
//     small at_most groups, which enforce those exactly. States are
//     pruned against a target by Lagrangian bounds of the remaining
//     items: a grid of 25 capacity multipliers (the tightest, found in
//     one comparison per state, approximates the LP bound of the state's
//     residual capacity; with chains it reaches down to 0 and spans the
//     LP's multiplier too), stars as bound groups, a chain by its best
//     cut, and the exact dual of each group's count (the best gains of
//     the room a bucket has left). Targets are guessed from above.
//  6. Branch and bound over what the DP does not enforce (one-way
//     requires that are not chains, exclusions beyond the frontier's
//     slots, groups beyond the bucket limit, relaxed by multipliers),
//     with the DP as the relaxation at every node (search.go).
//  7. gini (circuit.go): the admissibility model is compiled from the
//     Problem into gini — a literal per variant, at most one per unit,
//     mandatory units, requires and excludes clauses, same_choice cycles,
//     at_most as sorting networks (logic.CardSort), capacity and utility
//     as pseudo-Boolean sums (one-hot bits, a column adder, a bitwise
//     comparison with a constant). Every returned pack is checked against
//     it (check.go: the pack assumed, capacity summed over the core
//     units); a failure is an [ErrInternal] that names the violated rule,
//     never a silent answer. Infeasible problems are explained with its
//     activation literals and Why, then minimised by deletion
//     (conflict.go). When a structural limit (MaxNodes, MaxStates) stops
//     the search, gini searches a core of at most 64 units under U ≥ T
//     (satcore.go).
//
// # Where gini earns its place
//
// On dense cores the root DP leaves open (BenchmarkCoreSearch), branch
// and bound with the DP proves every instance in a tenth of the time in
// which gini, searching under U ≥ T, proves a few; on the hard mixes
// (BenchmarkHardMix) the cores left after fixing hold 4–1,100 items,
// where CDCL proofs of knapsack optimality do not scale past ~60
// (solver-notes §6.2). The figures, and those of the gini check of a pack
// (BenchmarkCheck), are in docs/performance.md.
//
// So the search stays branch and bound with the DP, and gini does what
// the DP cannot: an independent check of every pack against the
// constraints as the caller stated them (not the merged model the search
// uses), subset-minimal conflicts, and a last try on small cores when a
// structural limit stops the search.
//
// # Contiguous windows with warm summaries (measured)
//
// host/pack keeps a contiguous window by making each older exchange all
// or nothing and require the next newer one; each warm artifact excludes
// the raws it covers. At a 32k cap only part of the window fits, and the
// optimum trades summaries against a run of raws (host/runtime's
// BenchmarkWarmPack; the window mix of BenchmarkHardMix, genWindow). The
// DP used to relax the requires and branch on them, and priced tokens at
// the LP's multiplier, which ignores the exclusions: a root bound 43%
// above the optimum, 3 million DP states. What decided the changes, in
// deterministic work (Stats.Work summed over the seeds; every instance
// proven unless noted), each row adding one change:
//
//	window mix, n/cap (seeds)   524/32k(20)  2048/128k(10)  2048/300k(10)  10000/300k(3)
//	before                        1.04M      162M, 4 proven  250M, 0 proven   0.36M
//	chains in the DP (one bit)    0.81M       25.0M          228M, 0 proven   0.32M
//	λ tuned with stars, from 0    0.57M        4.03M          67.3M           1.67M
//	grid down to 0 with chains    0.48M        1.48M           5.02M          1.69M
//	grid spans the LP's λ too     0.36M        1.39M           5.06M          1.00M
//	the chain's cluster first     0.36M        1.25M           2.82M          1.00M
//
// (At 10,000 units and 300k the cut is fixed before the DP; the work is
// tuning λ over 10,000 items, about the same time as before.) Tried and
// left out, no better in work: a beam 4–16× wider for chains (the
// incumbent did not improve), re-spacing the guessed targets after the
// DP's own bound falls, a midpoint target before the incumbent (5% more),
// five grid points around the LP's λ instead of 25 (7× the states at
// 10,000/300k), multipliers 4–16× the tuned λ on top of the grid.
//
// # Limits and determinism
//
// Solve is deterministic: the same problem and options give the same
// Solution (but for Stats.Elapsed) on any machine, under any load. The
// limits that stop a search early are work budgets counted in work units
// (Options.MaxWork: DP states, multiplier and fixing evaluations, search
// nodes, and 500,000 per slice of gini search; Options.MaxNodes;
// Options.MaxStates), never time. gini has no conflict budget; Try(1ns)
// stops at its first deadline check, after 20,000 propagations, which
// makes it a deterministic slice. The wall clock (Options.TimeLimit, the
// context's deadline) is only a safety net, ten times the default work
// budget; when it cuts a search the result may differ between runs, and
// Stats.Limit says [LimitTime]. No map iteration order or randomness
// enters a decision.
//
// # Ties
//
// Among packs of maximal utility Solve returns one with the fewest
// tokens. Remaining ties are broken by a fixed processing order (a
// chain's cluster first, its members newest first, then items by
// decreasing certainty under the multipliers, then by Order, oldest
// first; within an item the richer option wins; among DP buckets of equal
// value the lower bucket), which is deterministic but not a user-facing
// preference. The fewest-tokens rule is exact except when a multiplier
// decides an at_most group the DP relaxes (more groups than its buckets
// hold), where it is best effort.
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
//		return err // invalid problem, cancelled, deadline already passed, or ErrInternal
//	}
//	switch sol.Status {
//	case solver.Infeasible:
//		return fmt.Errorf("pack: %v", sol.Conflict)
//	case solver.Feasible:
//		// valid pack; optimum is at most sol.Bound; sol.Stats.Limit says why
//	}
//	for i, c := range sol.Choice { /* c == -1: p.Units[i] omitted */ }
package solver
