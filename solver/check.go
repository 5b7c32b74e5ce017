package solver

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-air/gini/z"
)

// ErrInternal is wrapped by errors that report a bug in the solver, such
// as a pack that fails the gini check. Solve never returns such a pack.
var ErrInternal = errors.New("solver: internal error")

// check verifies a pack with gini against the compiled admissibility
// model: the pack's variants are assumed together with every mandatory
// unit and constraint and with the capacity, a pseudo-Boolean constraint
// over the core units (the other units' tokens are a constant), and gini
// must find them consistent. With every input assumed this is unit
// propagation, a few milliseconds at 10,000 units. A failure is a solver
// bug; the error wraps ErrInternal and names what the pack violates.
func check(p *Problem, idx map[string]int, choice []int, core []int) error {
	if checkPack(p, idx, choice, core, false) == nil {
		return nil
	}
	// Compile again with activation literals to name what fails.
	return checkPack(p, idx, choice, core, true)
}

func checkPack(p *Problem, idx map[string]int, choice []int, core []int, guarded bool) error {
	k := compile(p, idx, guarded, core)
	inCore := make([]bool, len(p.Units))
	for _, u := range core {
		inCore[u] = true
	}
	var fixed int64
	var rest []int
	for u := range p.Units {
		switch {
		case inCore[u]:
		case choice[u] >= 0:
			fixed += p.Units[u].Variants[choice[u]].Tokens
			rest = append(rest, u)
		default:
			rest = append(rest, u)
		}
	}
	capAct := k.guard(guarded)
	k.atMost(capAct, k.sum(core, func(u, v int) int64 { return p.Units[u].Variants[v].Tokens }), p.Capacity-fixed)
	k.assumeChoice(choice, core)
	k.assumeChoice(choice, rest)
	if guarded {
		k.g.Assume(capAct)
		for _, a := range k.act {
			if a != z.LitNull {
				k.g.Assume(a)
			}
		}
		k.g.Assume(k.con...)
	}
	if k.g.Solve() == 1 {
		return nil
	}
	failed := k.g.Why(nil)
	for _, m := range failed {
		if m == capAct {
			return fmt.Errorf("%w: the pack exceeds the capacity %d (gini check)", ErrInternal, p.Capacity)
		}
	}
	for i, a := range k.act {
		if a != z.LitNull && slices.Contains(failed, a) {
			return fmt.Errorf("%w: the pack omits mandatory unit %q (gini check)", ErrInternal, p.Units[i].ID)
		}
	}
	for j, a := range k.con {
		if slices.Contains(failed, a) {
			return fmt.Errorf("%w: the pack violates Constraints[%d] %v (gini check)", ErrInternal, j, p.Constraints[j])
		}
	}
	return fmt.Errorf("%w: the pack is inconsistent (gini check)", ErrInternal)
}
