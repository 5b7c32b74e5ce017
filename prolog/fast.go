package prolog

// Go versions of predicates ichiban defines in Prolog (bootstrap.pl)
// through \+ or several clauses. They are semantically the same, but:
//
//   - they leave no choice point where the bootstrap clauses do (ichiban
//     has no clause indexing, so number(1.0), callable(a), X @>= Y and
//     member(X, [a]) left one): the top level can then end such answers
//     with a full stop, as SWI-Prolog does (member/2 is deterministic on
//     the last element there too);
//   - they do not compile a throw-away clause per call (fail/0 was \+ true,
//     nonvar/1 was \+ var(X), X \= Y was \+ X = Y), which made
//     failure-driven loops several times slower than needed;
//   - member/2 backtracks in constant time per element (ichiban's clauses
//     made backtracking over a long list quadratic).
//
// \+/1 calls its goal directly unless it is a control construct (see
// fastCall1).

import (
	"context"

	"github.com/ichiban/prolog/engine"
)

// registerFast installs the predicates above.
func (in *Interpreter) registerFast() {
	vm := &in.ip.VM
	fail := func(*engine.VM, engine.Cont, *engine.Env) *engine.Promise { return engine.Bool(false) }
	vm.Register0(engine.NewAtom("fail"), fail)
	vm.Register0(engine.NewAtom("false"), fail)
	test := func(name string, ok func(t engine.Term) bool) {
		vm.Register1(engine.NewAtom(name), func(_ *engine.VM, t engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			if !ok(env.Resolve(t)) {
				return engine.Bool(false)
			}
			return k(env)
		})
	}
	test("nonvar", func(t engine.Term) bool { _, v := t.(engine.Variable); return !v })
	test("atomic", func(t engine.Term) bool {
		switch t.(type) {
		case engine.Variable, engine.Compound:
			return false
		}
		return true
	})
	test("number", func(t engine.Term) bool {
		switch t.(type) {
		case engine.Integer, engine.Float:
			return true
		}
		return false
	})
	test("callable", func(t engine.Term) bool {
		switch t.(type) {
		case engine.Atom, engine.Compound:
			return true
		}
		return false
	})
	compare := func(name string, ok func(order int) bool) {
		vm.Register2(engine.NewAtom(name), func(_ *engine.VM, x, y engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			if !ok(x.Compare(y, env)) {
				return engine.Bool(false)
			}
			return k(env)
		})
	}
	compare("==", func(o int) bool { return o == 0 })
	compare(`\==`, func(o int) bool { return o != 0 })
	compare("@=<", func(o int) bool { return o <= 0 })
	compare("@>=", func(o int) bool { return o >= 0 })
	vm.Register2(engine.NewAtom(`\=`), func(_ *engine.VM, x, y engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
		if _, ok := env.Unify(x, y); ok {
			return engine.Bool(false)
		}
		return k(env)
	})
	vm.Register3(engine.NewAtom("append"), appendList)
	vm.Register1(engine.NewAtom(`\+`), negate)
	vm.Register2(engine.NewAtom("member"), member)
}

// negate is \+ Goal.
func negate(vm *engine.VM, goal engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	return engine.Delay(func(ctx context.Context) *engine.Promise {
		ok, err := fastCall1(vm, goal, engine.Success, env).Force(ctx)
		switch {
		case err != nil:
			return engine.Error(err)
		case ok:
			return engine.Bool(false)
		}
		return k(env)
	})
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
