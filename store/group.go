package store

import "sync"

// groupCommit lets concurrent Updates share one transaction, and so one
// synced write. Badger syncs each transaction on its own and starts a new
// one only after every earlier commit is done (its oracle waits for the
// commit watermark), so N writers on N conversations used to cost N syncs
// in a row: eight writers appended no faster than one.
//
// The first Update to arrive leads: it takes every write queued so far,
// runs their fns in one transaction and commits it; Updates that arrive
// meanwhile queue for the next leader. An acknowledged write is still
// durable when its Update returns — it waited for the commit that holds
// it. If the shared transaction fails, each fn runs again alone, so one
// write's error (a reused idempotency key, a value too large) is its own
// and never another's. There is no goroutine: the leader is a caller.
type groupCommit struct {
	mu    sync.Mutex // protects the fields below
	cond  *sync.Cond // signalled when a batch is done
	queue []*groupWrite
	busy  bool // a leader is committing
}

type groupWrite struct {
	fn   func(kvTxn) error
	err  error
	done bool
}

// update queues fn and returns its outcome; commit runs one fn in a
// transaction of its own.
func (g *groupCommit) update(fn func(kvTxn) error, commit func(func(kvTxn) error) error) error {
	w := &groupWrite{fn: fn}
	g.mu.Lock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	g.queue = append(g.queue, w)
	for g.busy && !w.done {
		g.cond.Wait()
	}
	if w.done {
		g.mu.Unlock()
		return w.err
	}
	batch := g.queue
	g.queue = nil
	g.busy = true
	g.mu.Unlock()

	g.commit(batch, commit)

	g.mu.Lock()
	for _, b := range batch {
		b.done = true
	}
	g.busy = false
	g.cond.Broadcast()
	g.mu.Unlock()
	return w.err
}

// commit sets the outcome of every write of batch.
func (g *groupCommit) commit(batch []*groupWrite, commit func(func(kvTxn) error) error) {
	if len(batch) > 1 {
		err := commit(func(t kvTxn) error {
			for _, w := range batch {
				if err := w.fn(t); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return
		}
	}
	for _, w := range batch {
		w.err = commit(w.fn)
	}
}
