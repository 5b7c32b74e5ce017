package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"sync"
)

// errInterrupted is what a read returns when SIGINT (on a terminal) or the
// end of ctx interrupts it.
var errInterrupted = errors.New("interrupted")

// lineReader reads its input a line at a time in the background, so that
// an interactive command (repl, chat) can stop waiting for a line when the
// user presses Ctrl-C.
type lineReader struct {
	in         *bufio.Reader
	interrupts chan os.Signal  // SIGINT, on a terminal; nil otherwise
	pending    chan readResult // a line read still under way (interrupted)
}

type readResult struct {
	line string
	err  error
}

// next returns the next line (with its newline, if any). It returns
// errInterrupted on SIGINT or when ctx ends. An interrupted read goes on:
// the next call takes its line (the terminal drops what was typed before
// the interrupt, so that line is the one typed after it).
func (r *lineReader) next(ctx context.Context) (string, error) {
	if r.pending == nil {
		ch := make(chan readResult, 1)
		go func() {
			line, err := r.in.ReadString('\n')
			ch <- readResult{line, err}
		}()
		r.pending = ch
	}
	select {
	case res := <-r.pending:
		r.pending = nil
		return res.line, res.err
	case <-r.interrupts:
		return "", errInterrupted
	case <-ctx.Done():
		return "", errInterrupted
	}
}

// errCtrlC is the cause of a turn cancelled with Ctrl-C: its receipt says
// so for each request it ended.
var errCtrlC = errors.New("interrupted by Ctrl-C")

// interruptible returns a child of ctx that SIGINT on interrupts (nil:
// none) cancels, with errCtrlC as its cause, and stop, which releases it
// and reports whether SIGINT cancelled it. stop may be called more than
// once.
func interruptible(ctx context.Context, interrupts <-chan os.Signal) (context.Context, func() bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	if interrupts == nil {
		return ctx, func() bool { cancel(nil); return false }
	}
	done, exited := make(chan struct{}), make(chan bool, 1)
	go func() {
		select {
		case <-interrupts:
			cancel(errCtrlC)
			exited <- true
		case <-done:
			exited <- false
		}
	}()
	var once sync.Once
	var hit bool
	return ctx, func() bool {
		once.Do(func() {
			close(done)
			hit = <-exited
			cancel(nil)
		})
		return hit
	}
}
