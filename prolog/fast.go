package prolog

// Go versions of list predicates ichiban defines in Prolog (bootstrap.pl):
//
//   - member/2 leaves no choice point at the last element of a proper
//     list (as in SWI-Prolog), so the top level can end such an answer
//     with a full stop;
//   - append/3 with a proper first list builds the result in one step.

import (
	"context"

	"github.com/ichiban/prolog/engine"
)

// registerFast installs the predicates above.
func (in *Interpreter) registerFast() {
	vm := &in.ip.VM
	vm.Register3(engine.NewAtom("append"), appendList)
	vm.Register2(engine.NewAtom("member"), member)
}

// member is member(Elem, List): Elem unifies with each element of List in
// turn; no choice point is left at the last element of a proper list. A
// partial list is extended without end, as in SWI-Prolog.
func member(vm *engine.VM, elem, list engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	switch l := env.Resolve(list).(type) {
	case engine.Variable:
		tail := engine.NewVariable()
		return engine.Delay(func(context.Context) *engine.Promise {
			return engine.Unify(vm, l, engine.Cons(elem, tail), k, env)
		}, func(context.Context) *engine.Promise {
			env, _ := env.Unify(l, engine.Cons(engine.NewVariable(), tail))
			return member(vm, elem, tail, k, env)
		})
	case engine.Compound:
		if l.Functor() != atomDot || l.Arity() != 2 {
			return engine.Bool(false)
		}
		switch t := env.Resolve(l.Arg(1)).(type) {
		case engine.Variable:
		case engine.Compound:
			if t.Functor() != atomDot || t.Arity() != 2 {
				return unify(elem, l.Arg(0), k, env)
			}
		default: // [] or an improper end: l's head is the last element
			return unify(elem, l.Arg(0), k, env)
		}
		return engine.Delay(func(context.Context) *engine.Promise {
			return unify(elem, l.Arg(0), k, env)
		}, func(context.Context) *engine.Promise {
			return member(vm, elem, l.Arg(1), k, env)
		})
	}
	return engine.Bool(false)
}

// appendList is append(Xs, Ys, Zs), ichiban's algorithm with the
// cycle-safe unify: ichiban's unifies Ys with Zs (or a cell of them) in
// Go, which never ends when both are cyclic.
func appendList(vm *engine.VM, xs, ys, zs engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	if c, ok := env.Resolve(xs).(engine.Compound); ok {
		var elems []engine.Term
		it := engine.ListIterator{List: c} // no Env: a proper list without variables in its spine
		for it.Next() {
			elems = append(elems, it.Current())
		}
		if it.Err() == nil {
			return unify(zs, engine.PartialList(ys, elems...), k, env)
		}
	}
	return appendCells(xs, ys, zs, k, env)
}

// appendCells is append([], L, L). append([X|L1], L2, [X|L3]) :- append(L1, L2, L3).
func appendCells(xs, ys, zs engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	pair := engine.NewAtom("-")
	return engine.Delay(func(context.Context) *engine.Promise {
		return unify(pair.Apply(xs, ys), pair.Apply(atomNil, zs), k, env)
	}, func(context.Context) *engine.Promise {
		x, l1, l3 := engine.NewVariable(), engine.NewVariable(), engine.NewVariable()
		return unify(pair.Apply(xs, zs), pair.Apply(engine.Cons(x, l1), engine.Cons(x, l3)), func(env *engine.Env) *engine.Promise {
			return appendCells(l1, ys, l3, k, env)
		}, env)
	})
}
