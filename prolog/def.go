package prolog

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/ichiban/prolog/engine"
)

// Call is what a foreign predicate works with: the query's context, the VM
// and the current bindings. A predicate reads its arguments through the
// Call's helpers (which produce ISO errors in ISO order) and binds outputs
// with [Call.Unify].
type Call struct {
	Ctx context.Context
	VM  *engine.VM
	Env *engine.Env
	In  *Interpreter
	def *Def
}

// Unify unifies a and b (rational trees too), keeping the new bindings on
// success.
func (c *Call) Unify(a, b engine.Term) bool {
	env, ok := c.Env.Unify(a, b)
	if ok {
		c.Env = env
	}
	return ok
}

// Resolve dereferences t under the current bindings.
func (c *Call) Resolve(t engine.Term) engine.Term { return c.Env.Resolve(t) }

// Indicator returns the predicate indicator Name/Arity of the running
// predicate, the context of the errors it raises.
func (c *Call) Indicator() engine.Term { return c.def.indicator() }

// Fn0 … Fn8 are foreign predicate bodies. They return true to succeed
// (with the bindings made through [Call.Unify]), false to fail, or an error
// to throw (mapped to an ISO error term, see [ISOError]).
type (
	Fn0 func(c *Call) (bool, error)
	Fn1 func(c *Call, a1 engine.Term) (bool, error)
	Fn2 func(c *Call, a1, a2 engine.Term) (bool, error)
	Fn3 func(c *Call, a1, a2, a3 engine.Term) (bool, error)
	Fn4 func(c *Call, a1, a2, a3, a4 engine.Term) (bool, error)
	Fn5 func(c *Call, a1, a2, a3, a4, a5 engine.Term) (bool, error)
	Fn6 func(c *Call, a1, a2, a3, a4, a5, a6 engine.Term) (bool, error)
	Fn7 func(c *Call, a1, a2, a3, a4, a5, a6, a7 engine.Term) (bool, error)
	Fn8 func(c *Call, a1, a2, a3, a4, a5, a6, a7, a8 engine.Term) (bool, error)
)

// Def is one foreign predicate, built by Pred0 … Pred8 so that the arity is
// checked at compile time. Mode is its pldoc line ("name(+A, -B) is det"),
// kept so tests can compare it with the documentation.
type Def struct {
	Name  string
	Arity int
	Mode  string
	body  func(c *Call, args []engine.Term) (bool, error)
}

// Indicator returns "name/arity".
func (d *Def) Indicator() string { return fmt.Sprintf("%s/%d", d.Name, d.Arity) }

func (d *Def) indicator() engine.Term {
	return engine.NewAtom("/").Apply(engine.NewAtom(d.Name), engine.Integer(d.Arity))
}

// Pred0 defines a foreign predicate of arity 0.
func Pred0(name, mode string, fn Fn0) Def {
	return Def{name, 0, mode, func(c *Call, a []engine.Term) (bool, error) { return fn(c) }}
}

// Pred1 defines a foreign predicate of arity 1.
func Pred1(name, mode string, fn Fn1) Def {
	return Def{name, 1, mode, func(c *Call, a []engine.Term) (bool, error) { return fn(c, a[0]) }}
}

// Pred2 defines a foreign predicate of arity 2.
func Pred2(name, mode string, fn Fn2) Def {
	return Def{name, 2, mode, func(c *Call, a []engine.Term) (bool, error) { return fn(c, a[0], a[1]) }}
}

// Pred3 defines a foreign predicate of arity 3.
func Pred3(name, mode string, fn Fn3) Def {
	return Def{name, 3, mode, func(c *Call, a []engine.Term) (bool, error) { return fn(c, a[0], a[1], a[2]) }}
}

// Pred4 defines a foreign predicate of arity 4.
func Pred4(name, mode string, fn Fn4) Def {
	return Def{name, 4, mode, func(c *Call, a []engine.Term) (bool, error) { return fn(c, a[0], a[1], a[2], a[3]) }}
}

// Pred5 defines a foreign predicate of arity 5.
func Pred5(name, mode string, fn Fn5) Def {
	return Def{name, 5, mode, func(c *Call, a []engine.Term) (bool, error) {
		return fn(c, a[0], a[1], a[2], a[3], a[4])
	}}
}

// Pred6 defines a foreign predicate of arity 6.
func Pred6(name, mode string, fn Fn6) Def {
	return Def{name, 6, mode, func(c *Call, a []engine.Term) (bool, error) {
		return fn(c, a[0], a[1], a[2], a[3], a[4], a[5])
	}}
}

// Pred7 defines a foreign predicate of arity 7.
func Pred7(name, mode string, fn Fn7) Def {
	return Def{name, 7, mode, func(c *Call, a []engine.Term) (bool, error) {
		return fn(c, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
	}}
}

// Pred8 defines a foreign predicate of arity 8.
func Pred8(name, mode string, fn Fn8) Def {
	return Def{name, 8, mode, func(c *Call, a []engine.Term) (bool, error) {
		return fn(c, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
	}}
}

// Install registers defs. It panics on an indicator installed twice (by this
// call or an earlier one), the way sql.Register does: two Go definitions of
// one predicate are a programmer error found at start-up.
func (in *Interpreter) Install(defs ...Def) {
	for i := range defs {
		d := defs[i]
		key := d.Indicator()
		if _, dup := in.installed[key]; dup {
			panic("prolog: Install: duplicate predicate " + key)
		}
		in.installed[key] = &d
		in.register(&d)
	}
}

// register hands d to the VM (replacing any builtin of the same indicator).
func (in *Interpreter) register(d *Def) {
	vm, name := &in.ip.VM, engine.NewAtom(d.Name)
	run := func(vm *engine.VM, args []engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
		return in.invoke(d, vm, args, k, env)
	}
	switch d.Arity {
	case 0:
		vm.Register0(name, func(vm *engine.VM, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, nil, k, env)
		})
	case 1:
		vm.Register1(name, func(vm *engine.VM, a engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a}, k, env)
		})
	case 2:
		vm.Register2(name, func(vm *engine.VM, a, b engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b}, k, env)
		})
	case 3:
		vm.Register3(name, func(vm *engine.VM, a, b, c engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b, c}, k, env)
		})
	case 4:
		vm.Register4(name, func(vm *engine.VM, a, b, c, d engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b, c, d}, k, env)
		})
	case 5:
		vm.Register5(name, func(vm *engine.VM, a, b, c, d, e engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b, c, d, e}, k, env)
		})
	case 6:
		vm.Register6(name, func(vm *engine.VM, a, b, c, d, e, f engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b, c, d, e, f}, k, env)
		})
	case 7:
		vm.Register7(name, func(vm *engine.VM, a, b, c, d, e, f, g engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b, c, d, e, f, g}, k, env)
		})
	case 8:
		vm.Register8(name, func(vm *engine.VM, a, b, c, d, e, f, g, h engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
			return run(vm, []engine.Term{a, b, c, d, e, f, g, h}, k, env)
		})
	default:
		panic("prolog: Install: arity out of range for " + d.Indicator())
	}
}

// invoke runs a foreign predicate body with the query's context. A panic in
// the body becomes system_error; the continuation runs outside the recover so
// later goals' faults are not blamed on this predicate.
func (in *Interpreter) invoke(d *Def, vm *engine.VM, args []engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	return engine.Delay(func(ctx context.Context) *engine.Promise {
		c := &Call{Ctx: ctx, VM: vm, Env: env, In: in, def: d}
		ok, err := safeCall(d, c, args)
		if err != nil {
			return engine.Error(in.exception(c, err))
		}
		if !ok {
			return engine.Bool(false)
		}
		return k(c.Env)
	})
}

func safeCall(d *Def, c *Call, args []engine.Term) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return d.body(c, args)
}

// panicError is a recovered panic from a foreign predicate.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("prolog: panic in foreign predicate: %v", e.value)
}
