package prolog

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ichiban/prolog/engine"
)

// ErrNoSolution is returned by [Interpreter.Once] when the goal fails.
var ErrNoSolution = errors.New("prolog: no solution")

// Binding is a query variable and its value in one solution.
type Binding struct {
	Name  string
	Value engine.Term
}

// Query is an open query. Only one may be open per Interpreter, and it must
// be closed. It is not safe for concurrent use.
type Query struct {
	in     *Interpreter
	ctx    context.Context
	cancel context.CancelCauseFunc
	vars   []engine.ParsedVariable
	more   chan bool
	next   chan answer
	env    *engine.Env
	last   bool
	err    error // set by the engine goroutine before it closes next
	done   bool
	final  error
}

// Query parses goal (a trailing full stop is optional) and starts it under
// ctx. A syntax error is a *SyntaxError with the column in goal.
func (in *Interpreter) Query(ctx context.Context, goal string) (*Query, error) {
	if in.broken != nil {
		return nil, in.broken
	}
	t, vars, err := in.parseGoal(goal)
	if err != nil {
		return nil, err
	}
	qctx, cancel := context.WithCancelCause(ctx)
	q := &Query{in: in, ctx: qctx, cancel: cancel, vars: vars, more: make(chan bool, 1), next: make(chan answer)}
	in.cancel = cancel
	vm := &in.ip.VM
	go func() {
		defer close(q.next)
		if !<-q.more {
			return
		}
		q.err = solve(qctx, vm, t, func(env *engine.Env, last bool) bool {
			q.next <- answer{env, last}
			return !last && <-q.more
		})
	}()
	return q, nil
}

// answer is one solution as the engine goroutine hands it over.
type answer struct {
	env  *engine.Env
	last bool
}

func (in *Interpreter) parseGoal(goal string) (engine.Term, []engine.ParsedVariable, error) {
	text := strings.TrimRight(goal, " \t\r\n")
	if !strings.HasSuffix(text, ".") || strings.HasSuffix(text, "..") {
		text += " ."
	}
	src, err := scan(text)
	if err != nil {
		return nil, nil, err
	}
	r := &countingReader{s: src.text}
	p := engine.NewParser(&in.ip.VM, r)
	t, err := p.Term()
	if err != nil {
		return nil, nil, &SyntaxError{Pos: src.origPos(tokenStart(r.s, r.off, err)), Msg: err.Error()}
	}
	if p.More() {
		return nil, nil, &SyntaxError{Pos: src.origPos(r.off), Msg: "text after the goal's full stop"}
	}
	return t, p.Vars, nil
}

// Next finds the next solution. It returns false when there are no more or
// the query ended with an error ([Query.Err]).
func (q *Query) Next() bool {
	if q.done {
		return false
	}
	q.more <- true
	select {
	case env, ok := <-q.next:
		return q.arrive(env, ok)
	case <-q.ctx.Done():
		// Cancelled: the engine stops at its next step unless it is stuck in
		// a Go builtin; give it Grace, then abandon the interpreter.
		select {
		case env, ok := <-q.next:
			return q.arrive(env, ok)
		case <-time.After(q.in.opts.Grace):
			q.in.broken = ErrAbandoned
			q.finish(ErrAbandoned)
			return false
		}
	}
}

func (q *Query) arrive(a answer, ok bool) bool {
	if !ok {
		q.finish(q.err)
		return false
	}
	q.env, q.last = a.env, a.last
	return true
}

func (q *Query) finish(err error) {
	q.done = true
	q.final = q.in.haltOr(q.ctx, err)
	q.cancel(nil)
	q.in.cancel = nil
}

// Last reports whether the solution found by Next is known to be the last:
// the goal left no choice point, so SWI-Prolog's top level would end the
// answer with "." without offering ";". False means more solutions may
// exist (the next Next may still fail).
func (q *Query) Last() bool { return q.last }

// Env returns the bindings of the current solution.
func (q *Query) Env() *engine.Env { return q.env }

// Bindings returns the query's named variables (not those starting with
// "_") and their values in the current solution, in order of first
// appearance.
func (q *Query) Bindings() []Binding {
	var bs []Binding
	for _, v := range q.vars {
		name := v.Name.String()
		if strings.HasPrefix(name, "_") {
			continue
		}
		bs = append(bs, Binding{Name: name, Value: Resolved(v.Variable, q.env)})
	}
	return bs
}

// Err returns the error that ended the query: an engine.Exception for an
// uncaught Prolog error, a *HaltError after halt/0,1, ctx's error when
// cancelled, [ErrAbandoned] from the watchdog.
func (q *Query) Err() error { return q.final }

// Close ends the query, cutting its remaining alternatives. It is safe to
// call more than once.
func (q *Query) Close() error {
	if q.done {
		return nil
	}
	q.more <- false
	select {
	case _, ok := <-q.next:
		if ok { // cannot happen: the engine stops after more=false
			break
		}
	case <-time.After(q.in.opts.Grace):
		q.in.broken = ErrAbandoned
	}
	q.finish(nil)
	return nil
}

// Once runs goal for its first solution and closes the query. It returns
// [ErrNoSolution] when the goal fails.
func (in *Interpreter) Once(ctx context.Context, goal string) ([]Binding, error) {
	q, err := in.Query(ctx, goal)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	if !q.Next() {
		if err := q.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNoSolution
	}
	return q.Bindings(), nil
}

// WriteQ renders t as writeq/1 would, with the interpreter's operators.
func (in *Interpreter) WriteQ(t engine.Term, env *engine.Env) string {
	return in.write(t, env, true)
}

// Write renders t as write/1 would.
func (in *Interpreter) Write(t engine.Term, env *engine.Env) string {
	return in.write(t, env, false)
}

func (in *Interpreter) write(t engine.Term, env *engine.Env, quoted bool) string {
	if quoted {
		return in.writeText(t, env, optsWriteQ)
	}
	return in.writeText(t, env, optsWrite)
}
