package prolog

// The top-level driver: the engine's machine runs the goal and tells,
// after each solution, whether a choice point remains, so that the top
// level can end a deterministic answer with "." instead of waiting for
// ";", as SWI-Prolog's does (engine.VM.Solve).

import (
	"context"

	"github.com/ichiban/prolog/engine"
)

// solve runs goal and calls yield with each solution's bindings and
// whether it is known to be the last (no choice point remains). It stops
// when yield returns false or after the last solution, and returns the
// error that ended the run (nil when the goal has no more solutions).
func solve(ctx context.Context, vm *engine.VM, goal engine.Term, yield func(env *engine.Env, last bool) bool) error {
	return vm.Solve(ctx, goal, nil, func(env *engine.Env, more bool) bool {
		return yield(env, !more) && more
	})
}
