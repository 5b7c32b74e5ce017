package prolog

// The top-level driver: ichiban's trampoline (engine.Promise.Force), run
// by the host so that it can tell, after each solution, whether a choice
// point remains, the way SWI-Prolog's top level ends a deterministic
// answer with "." instead of waiting for ";".
//
// ichiban keeps the choice points in a stack local to Force, and the
// promises on it have unexported fields. The host mirrors the promise's
// layout (checked field by field with reflect when the package loads) and
// runs the same loop over the same promises: an identical semantics, plus
// a look at the stack after each solution. Backtracking pops the promises
// whose alternatives are exhausted without running anything; the first
// promise that still has one is a choice point. Nothing runs ahead of the
// caller's request: the look pops only promises whose next step is a
// no-op (exhausted promises, and catch/3's re-activation marker), exactly
// as backtracking would, and stops at the first real alternative.
//
// NB: if ichiban's Promise ever changes shape, layoutOK is false and
// solve falls back to Force, reporting every solution as possibly not the
// last (TestPromiseLayout fails first).

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/ichiban/prolog/engine"
)

// promise mirrors engine.Promise of ichiban v1.2.2.
type promise struct {
	delayed   []func(context.Context) *engine.Promise
	ok        bool
	err       error
	cutParent *engine.Promise
	repeat    bool
	recover   func(error) *engine.Promise
}

// layoutOK reports whether promise has engine.Promise's layout.
var layoutOK = sameLayout(reflect.TypeFor[engine.Promise](), reflect.TypeFor[promise]())

func sameLayout(a, b reflect.Type) bool {
	if a.Size() != b.Size() || a.NumField() != b.NumField() {
		return false
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Offset != fb.Offset || fa.Type != fb.Type {
			return false
		}
	}
	return true
}

func inside(p *engine.Promise) *promise { return (*promise)(unsafe.Pointer(p)) }

// reenterPC identifies catch/3's re-activation marker (catchFrame.reenter),
// the one alternative the look at the stack may run: it only sets a flag
// and fails.
var reenterPC = reflect.ValueOf((&catchFrame{}).reenter).Pointer()

// solve runs goal and calls yield with each solution's bindings and
// whether it is known to be the last (no choice point remains). It stops
// when yield returns false or after the last solution, and returns the
// error that ended the run (nil when the goal has no more solutions).
func solve(ctx context.Context, vm *engine.VM, goal engine.Term, yield func(env *engine.Env, last bool) bool) error {
	var sol *engine.Env
	k := func(env *engine.Env) *engine.Promise {
		sol = env
		return engine.Bool(false)
	}
	if !layoutOK {
		_, err := engine.Call(vm, goal, func(env *engine.Env) *engine.Promise {
			return engine.Bool(!yield(env, false))
		}, nil).Force(ctx)
		return err
	}
	stack := []*engine.Promise{engine.Call(vm, goal, k, nil)}
	pop := func() *engine.Promise {
		p := stack[len(stack)-1]
		stack[len(stack)-1] = nil
		stack = stack[:len(stack)-1]
		return p
	}
	for len(stack) > 0 {
		// NB: Force selects on Done() once per step; so does this loop, so a
		// context that counts its Done calls sees the same steps.
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		p := pop()
		ip := inside(p)
		if len(ip.delayed) == 0 {
			switch {
			case ip.err != nil:
				if err := recoverFrom(&stack, ip.err); err != nil {
					return err
				}
			case ip.ok:
				return nil
			}
			continue
		}
		if ip.cutParent != nil {
			for len(stack) > 0 && pop() != ip.cutParent {
			}
			ip.cutParent = nil
		}
		q := child(ctx, ip)
		stack = append(stack, p, q)
		if sol != nil {
			env := sol
			sol = nil
			last := backtrackToChoice(ctx, &stack)
			if !yield(env, last) || last {
				return nil
			}
		}
	}
	return nil
}

// child runs p's next alternative as Promise.child does: a panic becomes
// an error, and the alternative is consumed unless p repeats.
func child(ctx context.Context, p *promise) (q *engine.Promise) {
	defer func() {
		if r := recover(); r != nil {
			q = engine.Error(fmt.Errorf("panic: %v", r))
		}
	}()
	defer func() {
		if !p.repeat {
			p.delayed, p.delayed[0] = p.delayed[1:], nil
		}
	}()
	if q = p.delayed[0](ctx); q == nil {
		q = engine.Bool(false)
	}
	return q
}

// recoverFrom unwinds the stack to the nearest promise whose recover
// function takes err, as promiseStack.recover does.
func recoverFrom(stack *[]*engine.Promise, err error) error {
	for s := *stack; len(s) > 0; {
		p := s[len(s)-1]
		s[len(s)-1] = nil
		s = s[:len(s)-1]
		*stack = s
		if r := inside(p).recover; r != nil {
			if q := r(err); q != nil {
				*stack = append(s, q)
				return nil
			}
		}
	}
	return err
}

// backtrackToChoice pops what backtracking would pop without running
// anything: promises with no alternative left, and catch/3 re-activation
// markers (run, as backtracking would). It stops at the first promise with
// a real alternative, which stays on the stack, and reports whether there
// was none: the solution just found is the last.
func backtrackToChoice(ctx context.Context, stack *[]*engine.Promise) bool {
	s := *stack
	defer func() { *stack = s }()
	for len(s) > 0 {
		ip := inside(s[len(s)-1])
		if ip.err != nil || ip.ok || ip.repeat || ip.cutParent != nil {
			return false
		}
		for _, f := range ip.delayed {
			if reflect.ValueOf(f).Pointer() != reenterPC {
				return false
			}
		}
		for len(ip.delayed) > 0 {
			_ = child(ctx, ip)
		}
		s[len(s)-1] = nil
		s = s[:len(s)-1]
	}
	return true
}
