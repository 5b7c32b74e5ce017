package main

import (
	"context"
	"fmt"

	"github.com/rlmpl/rlmpl/store"
)

// Live chat: while chat waits for a line, messages other workers append
// to its conversation (other processes on a PostgreSQL store) are shown
// as they arrive, through runtime.Conversation.Wait (LISTEN/NOTIFY, no
// polling), marked as from elsewhere; those appended during a turn are
// shown after it. On a terminal the line editor shows them above the line
// being typed and redraws it. Messages from before chat started are
// history, not shown.

// watch starts the watcher and returns the function that stops it and
// waits for it.
func (c *chat) watch() (stop func()) {
	st, err := c.cv.Stats()
	if err != nil {
		return func() {}
	}
	c.mu.Lock()
	c.seen, c.own = st.Messages, map[int64]bool{} // sequences are dense: the count is the last
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		after := st.Messages
		for {
			head, err := c.cv.Wait(ctx, after)
			if err != nil {
				return // cancelled, or the store is gone: chat reports that itself
			}
			after = head
			c.mu.Lock()
			if c.idle {
				c.showOthers()
			}
			c.mu.Unlock()
		}
	}()
	return func() { cancel(); <-done }
}

// setIdle says whether chat waits for a line (the watcher may print).
func (c *chat) setIdle(idle bool) {
	c.mu.Lock()
	c.idle = idle
	c.mu.Unlock()
}

// mineTurn records what a completed turn wrote: its user message, its
// answer, and the tool calls and results between them (a direct turn's
// rounds, written with the answer); other messages between them came from
// other workers during the turn.
func (c *chat) mineTurn(user, answer int64) {
	c.mine(user, answer)
	between, err := c.cv.Messages(store.Range(user+1, answer-1), 0)
	if answer-user < 2 || err != nil {
		return
	}
	for _, r := range between {
		if r.Message.Role == store.RoleTool || len(r.Message.ToolCalls) > 0 {
			c.mine(r.Seq)
		}
	}
}

// mine records sequences this chat's turns wrote.
func (c *chat) mine(seqs ...int64) {
	c.mu.Lock()
	for _, s := range seqs {
		if s > 0 && c.own != nil {
			c.own[s] = true
		}
	}
	c.mu.Unlock()
}

// others shows what other workers appended since the last look.
func (c *chat) others() {
	c.mu.Lock()
	c.showOthers()
	c.mu.Unlock()
}

// showOthers prints the messages after c.seen that this chat did not
// write: through the line editor while a line is read on a terminal, else
// on stdout. c.mu is held.
func (c *chat) showOthers() {
	if c.own == nil {
		return
	}
	recs, err := c.cv.Messages(store.After(c.seen), 0)
	if err != nil {
		return
	}
	for _, r := range recs {
		c.seen = max(c.seen, r.Seq)
		if c.own[r.Seq] {
			delete(c.own, r.Seq)
			continue
		}
		if c.json {
			c.emit(struct {
				Event string `json:"event"`
				recordJSON
			}{"message", recordView(r)})
			continue
		}
		line := messageLine(r, ", from elsewhere")
		if c.ed != nil && c.idle {
			c.ed.notify(line)
			continue
		}
		fmt.Fprintln(c.stdout, line)
	}
}
