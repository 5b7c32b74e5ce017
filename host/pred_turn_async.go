package host

// Async turns: a turn that runs while the program goes on.
//
//	conversation_turn_async(+Conversation, +Message, +Options, -Outcome) is det.
//	conversation_turn_await(+Task, +Timeout, -Outcome) is det.
//	conversation_turn_cancel(+Task) is det.
//
// The interpreter admits one caller at a time, so an async turn's calls
// back into Prolog (handlers, on_event, the pack hook) run on the thread
// that awaits it, inside conversation_turn_await/3: events queue without
// holding the turn up; a handler holds it until someone awaits.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
)

// turnTasks are a session's async turns. Turns of one conversation run in
// the order they were submitted, one at a time; turns of different
// conversations run in parallel. Their calls back into Prolog share one
// queue, so awaiting any task serves them all: a turn queued behind
// another never waits for a handler nobody serves.
type turnTasks struct {
	q *callQueue

	mu    sync.Mutex // protects the fields below
	next  int
	tasks map[int]*turnTask
	last  map[convKey]*turnTask // the latest task of each conversation
}

type convKey struct {
	st *runtime.Store
	id string
}

type turnTask struct {
	n, turnID   string
	key         convKey
	cancel      context.CancelCauseFunc
	done        chan struct{} // closed when the turn has ended
	res         runtime.TurnResult
	err         error
	withReceipt bool
}

// ErrTurnCancelled is the cause of an async turn stopped by
// conversation_turn_cancel/1 (or by closing its session).
var ErrTurnCancelled = errors.New("host: turn cancelled by conversation_turn_cancel/1")

var atomTurnTask = engine.NewAtom("turn_task")

func (t *turnTask) term() engine.Term {
	return atomTurnTask.Apply(engine.NewAtom(t.n), engine.NewAtom(t.turnID))
}

// conversationTurnAsync checks the conversation, message and options as
// conversation_turn/4 would, and unifies Outcome with
// ok(turn_task(N, TurnId)); only then does it start the turn, so a turn
// that runs is one its caller can await and cancel. What conversation_turn/4
// would report before running (a message that is not a user's, an unknown
// conversation) is this predicate's outcome, and nothing starts.
func (s *Session) conversationTurnAsync(c *prolog.Call, conv, msg, options, out engine.Term) (bool, error) {
	t, cont, res, err := s.turnArgs(c, "conversation_turn_async/4", conv, msg, options, out)
	if !cont {
		return res, err
	}
	if t.opts.TurnID == "" {
		t.opts.TurnID = runtime.NewTurnID()
	}
	if err := t.cv.CheckTurn(t.msg, t.opts); err != nil {
		return s.turnFailure(c, out, err)
	}
	if _, err := t.cv.Info(); err != nil {
		return s.turnFailure(c, out, err)
	}
	n := s.turns.number()
	task := &turnTask{n: fmt.Sprintf("task_%d", n), turnID: t.opts.TurnID, key: convKey{t.cv.Store(), t.cv.ID()}, done: make(chan struct{}), withReceipt: t.op.bool("receipt")}
	if !c.Unify(out, ok(task.term())) {
		return false, nil
	}
	t.sp.cb.q = s.turns.queue()
	// The turn outlives the query that started it: its context is the
	// session's, cancelled by conversation_turn_cancel/1 or Close.
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, unwatch := s.tokens.watch(withCallbacks(ctx, t.sp.cb), t.sp.token)
	task.cancel = cancel
	prev := s.turns.add(n, task)
	go func() {
		defer close(task.done)
		defer unwatch()
		if prev != nil {
			// Even when cancelled, a turn waits for the one before it: then
			// it runs cancelled, and records its user message and a failed
			// receipt naming the cancellation in order, as a running turn
			// does.
			<-prev.done
		}
		task.res, task.err = t.cv.Turn(ctx, t.msg, t.opts)
	}()
	return true, nil
}

// queue is the queue of every async turn's calls into Prolog.
func (ts *turnTasks) queue() *callQueue {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.q == nil {
		ts.q = newCallQueue()
	}
	return ts.q
}

// number is the number of a new task (its name is task_N).
func (ts *turnTasks) number() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.next++
	return ts.next
}

// serveDuring serves the async turns' calls into Prolog on cb (a call in
// progress, which holds the interpreter), under its lock, until stop is
// called. A synchronous turn does: it may wait for the turn lock an async
// turn of its conversation holds, which may itself wait for a handler
// that nothing else can run until the synchronous turn returns.
func (ts *turnTasks) serveDuring(cb *callbacks) (stop func()) {
	ts.mu.Lock()
	q := ts.q
	ts.mu.Unlock()
	if q == nil {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-q.ready:
				cb.mu.Lock()
				q.serve(cb.c)
				cb.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// add registers task number n as the latest of its conversation and
// returns the one it must wait for, if any.
func (ts *turnTasks) add(n int, task *turnTask) *turnTask {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tasks == nil {
		ts.tasks, ts.last = map[int]*turnTask{}, map[convKey]*turnTask{}
	}
	ts.tasks[n] = task
	prev := ts.last[task.key]
	ts.last[task.key] = task
	return prev
}

// lookup finds the task a turn_task(N, TurnId) term names.
func (ts *turnTasks) lookup(c *prolog.Call, t engine.Term) (int, *turnTask, error) {
	bad := prolog.TypeError("turn_task", prolog.Resolved(t, c.Env))
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return 0, nil, prolog.InstantiationError()
	case engine.Compound:
		if v.Functor() != atomTurnTask || v.Arity() != 2 {
			return 0, nil, bad
		}
		var n int
		name, isAtom := c.Resolve(v.Arg(0)).(engine.Atom)
		if _, err := fmt.Sscanf(name.String(), "task_%d", &n); !isAtom || err != nil {
			return 0, nil, bad
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		task, known := ts.tasks[n]
		if !known {
			return 0, nil, prolog.ExistenceError("turn_task", prolog.Resolved(t, c.Env))
		}
		return n, task, nil
	}
	return 0, nil, bad
}

// conversationTurnAwait waits up to Timeout seconds (a number, or
// infinite) for the task, running its calls back into Prolog meanwhile.
// Its Outcome is the turn's, as conversation_turn/4 gives it, and the task
// is then forgotten; at the time-out it is
// error(conversation_error([detail(turn_pending(Task)), ...])) and the
// task runs on.
func (s *Session) conversationTurnAwait(c *prolog.Call, task, timeout, out engine.Term) (bool, error) {
	n, t, err := s.turns.lookup(c, task)
	if err != nil {
		return false, err
	}
	var expired <-chan time.Time
	switch v := c.Resolve(timeout).(type) {
	case engine.Variable:
		return false, prolog.InstantiationError()
	case engine.Atom:
		if v.String() != "infinite" {
			return false, prolog.DomainError("timeout", v)
		}
	case engine.Integer, engine.Float:
		secs := float64(0)
		if i, isInt := v.(engine.Integer); isInt {
			secs = float64(i)
		} else {
			secs = float64(v.(engine.Float))
		}
		if secs < 0 {
			return false, prolog.DomainError("timeout", v)
		}
		timer := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer timer.Stop()
		expired = timer.C
	default:
		return false, prolog.TypeError("number", v)
	}
	q := s.turns.queue()
	for {
		q.serve(c)
		select {
		case <-t.done:
			q.serve(c) // the events it sent last
			s.turns.forget(n)
			if t.err != nil {
				return s.turnFailure(c, out, t.err)
			}
			return c.Unify(out, ok(s.turnResultTerm(t.res, t.withReceipt))), nil
		case <-q.ready:
		case <-expired:
			return c.Unify(out, convError(phAwait, engine.NewAtom("turn_pending").Apply(t.term()),
				"the turn has not ended yet; await it again or cancel it")), nil
		case <-c.Ctx.Done():
			return false, context.Cause(c.Ctx) // the query was cancelled; the turn runs on
		}
	}
}

func (ts *turnTasks) forget(n int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.tasks[n]; t != nil && ts.last[t.key] == t {
		delete(ts.last, t.key)
	}
	delete(ts.tasks, n)
}

// conversationTurnCancel cancels the task; its cleanup still runs (the
// cold handle is deleted, a failed receipt names the cancellation), and
// awaiting it gives that failure. A task that has ended is left as it is.
func (s *Session) conversationTurnCancel(c *prolog.Call, task engine.Term) (bool, error) {
	_, t, err := s.turns.lookup(c, task)
	if err != nil {
		return false, err
	}
	t.cancel(ErrTurnCancelled)
	return true, nil
}

// closeAll cancels every task and waits for them to end.
func (ts *turnTasks) closeAll() {
	ts.mu.Lock()
	tasks := make([]*turnTask, 0, len(ts.tasks))
	for _, t := range ts.tasks {
		tasks = append(tasks, t)
	}
	ts.tasks = nil
	ts.mu.Unlock()
	for _, t := range tasks {
		t.cancel(ErrTurnCancelled)
		<-t.done
	}
}
