package prolog

// Cyclic terms. X = f(X) binds X to a term that contains it. The engine's
// unification, comparison, occurs check, copy, call/1 (which compiles only
// the control constructs of a goal, never its data) and acyclic_term/1
// are rational-tree safe, as in SWI-Prolog
// (third_party/ichiban-prolog/PATCHES.md). What is left to the host are
// the builtins that would still loop on a cyclic argument (assert,
// subsumes_term/2, bagof/3, ...): they check first (Acyclic) and throw
// type_error(acyclic_term, Clause) for assert, as SWI-Prolog does,
// representation_error(cyclic_term) for the others, which SWI-Prolog
// supports and ichiban cannot.
//
// The walks are cheap on ordinary terms: they remember nothing until they
// are cheapDepth deep or cheapSteps long (a cycle makes a walk both, a
// wide shared term only long), so a small term costs no allocation.

import (
	"github.com/ichiban/prolog/engine"
)

const (
	cheapDepth = 64
	cheapSteps = 1024
)

// walk is the state of one cycle-aware traversal.
type walk struct {
	env   *engine.Env
	steps int
	state map[any]uint8 // nodes (or pairs of nodes) met since the walk stopped being cheap
}

const (
	onPath uint8 = iota + 1
	done
)

// key returns what identifies node c (nil for compact text, which holds
// no variables) once the walk is no longer cheap, and nil before.
func (w *walk) key(depth int, c engine.Compound) any {
	w.steps++
	if depth < cheapDepth && w.steps < cheapSteps {
		return nil
	}
	if w.state == nil {
		w.state = map[any]uint8{}
	}
	return nodeKey(c)
}

// nodeKey identifies a compound by where it lives (engine.NodeKey); nil
// for compact text, which holds no variables and so no cycles.
func nodeKey(c engine.Compound) any {
	if k, ok := engine.NodeKey(c); ok {
		return k
	}
	return nil
}

// Acyclic reports whether t is a finite tree under env. It is linear in
// the number of distinct nodes of t.
func Acyclic(t engine.Term, env *engine.Env) bool {
	w := walk{env: env}
	return !w.cyclic(t, 0)
}

// Ground reports whether t has no unbound variable under env. It is
// cycle-safe (a cyclic term is walked once per distinct node).
func Ground(t engine.Term, env *engine.Env) bool {
	w := walk{env: env}
	return w.ground(t, 0)
}

func (w *walk) cyclic(t engine.Term, depth int) bool {
	c, ok := w.env.Resolve(t).(engine.Compound)
	if !ok {
		return false
	}
	if _, text := compactText(c); text {
		return false
	}
	k := w.key(depth, c)
	if k != nil {
		switch w.state[k] {
		case onPath:
			return true
		case done:
			return false
		}
		w.state[k] = onPath
	}
	for i := 0; i < c.Arity(); i++ {
		if w.cyclic(c.Arg(i), depth+1) {
			return true
		}
	}
	if k != nil {
		w.state[k] = done
	}
	return false
}

// ground reports whether t has no unbound variable; a node met again
// (shared, or a cycle) was or is being checked already.
func (w *walk) ground(t engine.Term, depth int) bool {
	switch v := w.env.Resolve(t).(type) {
	case engine.Variable:
		return false
	case engine.Compound:
		if _, text := compactText(v); text {
			return true
		}
		if k := w.key(depth, v); k != nil {
			if w.state[k] != 0 {
				return true
			}
			w.state[k] = onPath
		}
		for i := range v.Arity() {
			if !w.ground(v.Arg(i), depth+1) {
				return false
			}
		}
	}
	return true
}

// unify continues with k when x and y unify.
func unify(x, y engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	env, ok := env.Unify(x, y)
	if !ok {
		return engine.Bool(false)
	}
	return k(env)
}

var (
	atomCall        = engine.NewAtom("call")
	atomRepresent   = engine.NewAtom("representation_error")
	atomCyclicTerm  = engine.NewAtom("cyclic_term")
	atomAcyclicTerm = engine.NewAtom("acyclic_term")
)

// cyclicError is the error a builtin that cannot take a cyclic argument
// throws: type_error(acyclic_term, Culprit) for a clause (SWI-Prolog's
// error for assert), representation_error(cyclic_term) otherwise.
func cyclicError(name string, arity int, culprit engine.Term, env *engine.Env) error {
	formal := atomRepresent.Apply(atomCyclicTerm)
	if name == "asserta" || name == "assertz" {
		formal = engine.NewAtom("type_error").Apply(atomAcyclicTerm, culprit)
	}
	pi := engine.NewAtom("/").Apply(engine.NewAtom(name), engine.Integer(arity))
	return engine.NewException(engine.NewAtom("error").Apply(formal, pi), env)
}

// registerCyclic installs the checks in front of the builtins that would
// loop on a cyclic argument.
func (in *Interpreter) registerCyclic() {
	vm := &in.ip.VM
	// check returns the error for the first cyclic term of args.
	check := func(name string, arity int, env *engine.Env, args ...engine.Term) error {
		for _, a := range args {
			if !Acyclic(a, env) {
				return cyclicError(name, arity, a, env)
			}
		}
		return nil
	}
	for name, fn := range map[string]func(*engine.VM, engine.Term, engine.Cont, *engine.Env) *engine.Promise{
		"asserta": engine.Asserta, "assertz": engine.Assertz,
	} {
		vm.Register1(engine.NewAtom(name), func(vm *engine.VM, a engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			if err := check(name, 1, env, a); err != nil {
				return engine.Error(err)
			}
			return fn(vm, a, k, env)
		})
	}
	for name, fn := range map[string]func(*engine.VM, engine.Term, engine.Term, engine.Cont, *engine.Env) *engine.Promise{
		"subsumes_term": engine.SubsumesTerm,
	} {
		vm.Register2(engine.NewAtom(name), func(vm *engine.VM, a, b engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			if err := check(name, 2, env, a, b); err != nil {
				return engine.Error(err)
			}
			return fn(vm, a, b, k, env)
		})
	}
	for name, fn := range map[string]func(*engine.VM, engine.Term, engine.Term, engine.Term, engine.Cont, *engine.Env) *engine.Promise{
		"bagof": engine.BagOf, "setof": engine.SetOf, "phrase": engine.Phrase,
	} {
		vm.Register3(engine.NewAtom(name), func(vm *engine.VM, a, b, c engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			if err := check(name, 3, env, a, b, c); err != nil {
				return engine.Error(err)
			}
			return fn(vm, a, b, c, k, env)
		})
	}
}
