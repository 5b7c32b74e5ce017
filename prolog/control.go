package prolog

// Control constructs that ichiban gets wrong:
//
//	%!  catch(:Goal, ?Catcher, :Recovery) is nondet.
//
// NB: ichiban v1.2.2's catch/3 stays active after Goal exits. Its catch
// frame is an entry of the engine's promise stack, and Goal's continuation
// (the rest of the clause, and of the query) runs above that entry, so an
// exception raised *after* the catch/3 call is caught by it, Recovery runs
// and everything after the catch/3 runs a second time:
//
//	main :- catch(true, E, (write(caught(E)), nl)), write(after), nl, throw(x).
//
// prints after, caught(x), after. ISO (7.8.9) makes a catch/3 call active
// only while Goal runs: from the call until Goal exits, and again when
// backtracking re-enters Goal. The catch/3 below keeps a flag per call:
// cleared when Goal exits, set again by a choice point pushed at the exit,
// which backtracking reaches just before it re-enters Goal. An exception
// that reaches an inactive frame (or one whose Catcher does not unify) is
// re-thrown from the frame's place, so it continues to the enclosing
// catchers as if the frame were not there (a Go error that is not an
// exception, such as a recovered panic, reaches them as
// error(system_error, Message), which is what any catch/3 of ichiban's
// makes of it). The frame itself is
// ichiban's (engine.Catch), so cancellation and halt/0,1 still end the
// query: the engine checks the query's context before every step.
// TestIchibanCatchStaysActive pins the upstream behaviour.

import (
	"cmp"
	"context"
	"io"
	"unsafe"

	"github.com/ichiban/prolog/engine"
)

var atomCatchRecover = engine.NewAtom("$catch_recover")

// registerControl installs catch/3 and its helper. They are
// continuation-passing predicates, which Def cannot express.
func (in *Interpreter) registerControl() {
	vm := &in.ip.VM
	vm.Register3(engine.NewAtom("catch"), catch3)
	vm.Register1(atomCatchRecover, catchRecover)
}

// catchFrame is the state of one catch/3 call. It travels through
// engine.Catch inside the goal $catch_recover(F, Ball), as an atomic term.
type catchFrame struct {
	catcher, recovery engine.Term
	k                 engine.Cont // what follows the catch/3 call
	// active is true while Goal runs: from the call until Goal exits, and
	// again once backtracking re-enters Goal.
	active bool
	// ball is bound to what was thrown. It is kept here, not in the goal
	// $catch_recover(F), so that ichiban's call/1 never walks the ball,
	// which may be cyclic.
	ball engine.Variable
}

// catch3 is catch(Goal, Catcher, Recovery): engine.Catch calls Goal as
// call/1 does (opaque to cut; errors of a non-callable Goal are caught
// here, as ISO requires; a compound Goal hidden, so that it never
// compiles Goal's data)
// and continues with exit; its catcher matches every ball, and
// $catch_recover decides whether the frame really catches.
func catch3(vm *engine.VM, goal, catcher, recovery engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	f := &catchFrame{catcher: catcher, recovery: recovery, k: k, active: true, ball: engine.NewVariable()}
	if _, ok := env.Resolve(goal).(engine.Compound); ok {
		goal = hidden(goal)
	}
	return engine.Catch(vm, goal, f.ball, atomCatchRecover.Apply(f), f.exit, env)
}

// exit runs when Goal exits: it deactivates the frame and leaves a choice
// point that re-activates it when backtracking goes back into Goal.
func (f *catchFrame) exit(env *engine.Env) *engine.Promise {
	f.active = false
	return engine.Delay(func(context.Context) *engine.Promise { return f.k(env) }, f.reenter)
}

// reenter is the choice point left where Goal exits: backtracking passes
// it just before it re-enters Goal, so the frame catches again. It changes
// nothing but the frame.
func (f *catchFrame) reenter(context.Context) *engine.Promise {
	f.active = true
	return engine.Bool(false)
}

// catchRecover runs where the frame was when an exception reached it: it
// calls Recovery when the frame is active and Catcher unifies with the
// ball, and re-throws the ball otherwise. The bindings Goal made are
// already undone (env is the one catch/3 was called with).
//
// NB: engine.Catch continues Recovery with exit, as it does Goal; the
// frame keeps the real continuation, so catchRecover ignores its own.
func catchRecover(vm *engine.VM, frame engine.Term, _ engine.Cont, env *engine.Env) *engine.Promise {
	f, ok := env.Resolve(frame).(*catchFrame)
	if !ok {
		return engine.Error(engine.TypeError(engine.NewAtom("catch_frame"), frame, env))
	}
	ball := env.Resolve(f.ball)
	if f.active {
		if env, ok := env.Unify(f.catcher, ball); ok {
			return fastCall1(vm, f.recovery, f.k, env)
		}
	}
	return engine.Error(engine.NewException(ball, env))
}

func (f *catchFrame) WriteTerm(w io.Writer, _ *engine.WriteOptions, _ *engine.Env) error {
	_, err := io.WriteString(w, "<catch>")
	return err
}

func (f *catchFrame) Compare(t engine.Term, env *engine.Env) int {
	return engine.CompareAtomic(f, t, func(a, b *catchFrame) int {
		return cmp.Compare(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)))
	}, env)
}
