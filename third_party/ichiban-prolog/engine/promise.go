package engine

import (
	"context"
	"fmt"
)

// rlmpl patch (PATCHES.md, "The machine"): a Promise is no longer a node
// of a trampoline's stack. It is what a foreign predicate answers the
// machine (machine.go): go on with the continuation, fail, throw, try
// alternatives (Delay), or run a goal with a Go continuation (Call). The
// constructors and Force keep upstream's signatures.

type promiseKind uint8

const (
	promiseFalse promiseKind = iota // the zero value: fail
	promiseTrue                     // the whole solve succeeds
	promiseError                    // throw err
	promiseDelay                    // try delayed in turn (a choice point)
	promiseGoal                     // run goal, then k
	promiseCont                     // go on with the continuation a machine's k recorded
	promiseCall                     // call procedure pi with args, then k
)

var (
	truePromise  = &Promise{kind: promiseTrue}
	falsePromise = &Promise{kind: promiseFalse}
	contPromise  = &Promise{kind: promiseCont}
)

// Promise is a delayed execution that results in (bool, error). The zero value for Promise is equivalent to Bool(false).
type Promise struct {
	kind    promiseKind
	delayed []func(context.Context) *Promise
	err     error

	// promiseGoal, promiseCall
	vm   *VM
	goal Term
	pi   procedureIndicator
	args []Term
	k    Cont
	env  *Env
}

// Delay delays an execution of k.
func Delay(k ...func(context.Context) *Promise) *Promise {
	return &Promise{kind: promiseDelay, delayed: k}
}

// Bool returns a promise that simply returns (ok, nil).
func Bool(ok bool) *Promise {
	if ok {
		return truePromise
	}
	return falsePromise
}

// Error returns a promise that simply returns (false, err).
func Error(err error) *Promise {
	return &Promise{kind: promiseError, err: err}
}

// callGoal returns a promise that runs goal as call/1 does, then k.
func callGoal(vm *VM, goal Term, k Cont, env *Env) *Promise {
	return &Promise{kind: promiseGoal, vm: vm, goal: goal, k: k, env: env}
}

// Force runs the promise to its first success and returns the result.
// A goal runs on the machine of env it was called with (so that what it
// binds is undone when that machine backtracks) or on a new one; its
// other solutions are discarded.
func (p *Promise) Force(ctx context.Context) (ok bool, err error) {
	if p == nil {
		return false, nil
	}
	switch p.kind {
	case promiseTrue:
		return true, nil
	case promiseFalse:
		return false, nil
	case promiseError:
		return false, p.err
	case promiseCont:
		return false, fmt.Errorf("engine: a continuation forced outside its machine")
	}
	m := p.env.machine()
	if m == nil {
		m = newMachine(p.vm)
	}
	return m.solve(ctx, p, nil)
}

func ensurePromise(p **Promise) {
	if r := recover(); r != nil {
		*p = Error(panicError(r))
	}
}

func panicError(r interface{}) error {
	return fmt.Errorf("panic: %v", r)
}
