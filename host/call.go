package host

import (
	"context"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// Calling Prolog from Go. A host predicate that must run a program's goal
// (a callback, a hook, a counter, a generator) calls it inside the query
// that called the predicate, through these three, so every such call has
// the same semantics: the same VM and bindings, the query's context, and
// exceptions returned as errors.

// solve runs goal in c's query and calls each with every solution until
// each returns false. It tells whether there was a solution.
func solve(ctx context.Context, c *prolog.Call, goal engine.Term, each func(*engine.Env) (more bool)) (bool, error) {
	found := false
	_, err := engine.Call(c.VM, goal, func(env *engine.Env) *engine.Promise {
		found = true
		return engine.Bool(!each(env)) // false asks for the next solution
	}, c.Env).Force(ctx)
	return found, err
}

// callAll calls each for every solution of goal.
func callAll(c *prolog.Call, goal engine.Term, each func(*engine.Env)) error {
	_, err := solve(c.Ctx, c, goal, func(env *engine.Env) bool {
		each(env)
		return true
	})
	return err
}

// callOnce runs goal for its first solution and returns the goal as bound,
// nil when it fails.
func callOnce(c *prolog.Call, goal engine.Term) (engine.Term, error) {
	var got engine.Term
	_, err := solve(c.Ctx, c, goal, func(env *engine.Env) bool {
		got = prolog.Resolved(goal, env)
		return false
	})
	return got, err
}
