package host

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestCallbacksCloseWaitsAndRefuses: close waits for the callback running
// under the lock and refuses later ones, so that a plan step still running
// after its completion returned never uses the interpreter its caller has
// taken back.
func TestCallbacksCloseWaitsAndRefuses(t *testing.T) {
	cb := &callbacks{}
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var done bool
	go func() {
		defer wg.Done()
		_ = cb.with(context.Background(), true, func(*prolog.Call) {
			close(inside)
			<-release
			done = true
		})
	}()
	<-inside
	closed := make(chan struct{})
	go func() { cb.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while a callback was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	if !done {
		t.Fatal("close returned before the callback finished")
	}
	ran := false
	if err := cb.with(context.Background(), true, func(*prolog.Call) { ran = true }); !errors.Is(err, errCallbacksClosed) || ran {
		t.Fatalf("a callback after close: err %v, ran %v; want errCallbacksClosed, not run", err, ran)
	}
	wg.Wait()
}
