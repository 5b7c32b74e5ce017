package host

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// callbacks serializes calls back into Prolog: plan steps may run in
// parallel goroutines, but the interpreter admits one caller at a time.
// A call in progress (rlm_completion/4, conversation_turn/4) runs them at
// once, under a lock, on the Call that started it. An async turn queues
// them for the thread that awaits it (conversation_turn_await/3): its
// submitter goes on running Prolog, which nothing else may do meanwhile.
type callbacks struct {
	mu     sync.Mutex
	c      *prolog.Call
	q      *callQueue // non-nil for an async turn
	closed bool       // the call that served them has returned
}

// errCallbacksClosed is what a callback gets once the call that served
// callbacks has returned (a plan step still running after its completion
// was cancelled or timed out): the interpreter is someone else's now.
var errCallbacksClosed = errors.New("host: a Prolog callback arrived after the call serving it returned")

// close waits for the callback in progress, if any, and refuses later
// ones: the synchronous call that serves them is about to use its Call
// again, and the interpreter admits one caller.
func (cb *callbacks) close() {
	if cb.q != nil {
		return // an async turn's queue is served by its await
	}
	cb.mu.Lock()
	cb.closed = true
	cb.mu.Unlock()
}

type callbacksKey struct{}

// withCallbacks carries cb in ctx, so that a Prolog-defined context
// adapter reached under ctx (a context_* predicate, a plan's context step)
// calls back into the interpreter through the caller's lock.
func withCallbacks(ctx context.Context, cb *callbacks) context.Context {
	return context.WithValue(ctx, callbacksKey{}, cb)
}

// callbacksFrom is the cb withCallbacks put in ctx, or nil.
func callbacksFrom(ctx context.Context) *callbacks {
	cb, _ := ctx.Value(callbacksKey{}).(*callbacks)
	return cb
}

// with runs fn with a Call into the interpreter and waits for it; with
// wait false (events) it may return first, fn queued.
func (cb *callbacks) with(ctx context.Context, wait bool, fn func(c *prolog.Call)) error {
	if cb.q == nil {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if cb.closed {
			return errCallbacksClosed
		}
		fn(cb.c)
		return nil
	}
	return cb.q.submit(ctx, wait, fn)
}

// call runs call(H, Arg, Reply) once and hands Reply, resolved, to read,
// which runs in the callback too (it may use the interpreter).
func (cb *callbacks) call(ctx context.Context, h, arg engine.Term, read func(c *prolog.Call, reply engine.Term) error) error {
	out := engine.NewVariable()
	return cb.run(ctx, engine.NewAtom("call").Apply(h, arg, out), h, func(c *prolog.Call, env *engine.Env) error {
		return read(c, prolog.Resolved(out, env))
	})
}

// ask is call for a handler whose reply is a value: read turns the reply
// into it.
func ask[T any](ctx context.Context, cb *callbacks, h, arg engine.Term, read func(*prolog.Call, engine.Term) (T, error)) (T, error) {
	var out T
	err := cb.call(ctx, h, arg, func(c *prolog.Call, reply engine.Term) (err error) {
		out, err = read(c, reply)
		return err
	})
	return out, err
}

// run runs goal once, calling each with its solution. A Prolog exception
// is returned as a handler_exception error, failure as handler_failed
// naming h.
func (cb *callbacks) run(ctx context.Context, goal, h engine.Term, each func(*prolog.Call, *engine.Env) error) error {
	var err error
	if qerr := cb.with(ctx, true, func(c *prolog.Call) { err = runOnce(ctx, c, goal, h, each) }); qerr != nil {
		return qerr
	}
	return err
}

func runOnce(ctx context.Context, c *prolog.Call, goal, h engine.Term, each func(*prolog.Call, *engine.Env) error) error {
	var eachErr error
	ok, err := solve(ctx, c, goal, func(env *engine.Env) bool {
		if each != nil {
			eachErr = each(c, env)
		}
		return false
	})
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		var ex engine.Exception
		if errors.As(err, &ex) {
			return &handlerError{kind: "handler_exception", text: c.In.Describe(ex.Term(), nil)}
		}
		return err
	}
	if !ok {
		return &handlerError{kind: "handler_failed", text: c.In.Describe(h, nil)}
	}
	return eachErr
}

type handlerError struct{ kind, text string }

func (e *handlerError) Error() string { return "host: " + e.kind + ": " + e.text }

// callQueue holds an async turn's calls into Prolog until a thread that
// may run Prolog serves them.
type callQueue struct {
	mu    sync.Mutex
	jobs  []*job
	ready chan struct{} // holds a token while jobs may be non-empty
}

func newCallQueue() *callQueue { return &callQueue{ready: make(chan struct{}, 1)} }

// A job is queued, then claimed by the server or abandoned by its
// submitter (whose context ended first): never both.
type job struct {
	fn    func(*prolog.Call)
	state atomic.Int32
	done  chan struct{} // closed once a claimed fn returned
}

const (
	jobQueued int32 = iota
	jobClaimed
	jobAbandoned
)

func (q *callQueue) submit(ctx context.Context, wait bool, fn func(*prolog.Call)) error {
	j := &job{fn: fn, done: make(chan struct{})}
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	if !wait {
		return nil
	}
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			return context.Cause(ctx)
		}
		<-j.done // running: it watches ctx too
		return nil
	}
}

// serve runs the queued jobs on c, in order, until none is left.
func (q *callQueue) serve(c *prolog.Call) {
	for {
		q.mu.Lock()
		jobs := q.jobs
		q.jobs = nil
		q.mu.Unlock()
		if len(jobs) == 0 {
			return
		}
		for _, j := range jobs {
			if j.state.CompareAndSwap(jobQueued, jobClaimed) {
				j.fn(c)
				close(j.done)
			}
		}
	}
}
