package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// TestPostgresFrozenConnection: the database stops answering while every
// socket stays open (a proxy that stops relaying: a partition without a
// reset, a stalled server). Every call, the turn lock included, ends with
// ErrUnavailable instead of waiting for traffic to resume, which the
// server-side statement timeout cannot do (the server never sees the
// statement); once the proxy relays again every call succeeds, the pool
// having dropped the connections it gave up on.
func TestPostgresFrozenConnection(t *testing.T) {
	direct := pgtest.DSN(t)
	proxy, dsn := pgtest.NewProxy(t, direct)
	o := Options{Postgres: &PostgresOptions{DSN: dsn, ConnectTimeout: 500 * time.Millisecond, StatementTimeout: time.Second}}
	db := openWith(t, &o)
	mustCreate(t, db, "c")
	for i := range 5 {
		mustAppend(t, db, "c", user(fmt.Sprint("before ", i)))
	}
	unlock, err := db.LockConversation(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	unlock() // the lock's connection is kept, and frozen below

	calls := []struct {
		name string
		f    func() error
	}{
		{"Append", func() error { _, err := db.Append("c", user("while frozen"), AppendOptions{}); return err }},
		{"Messages", func() error { _, err := db.Messages("c", All(), 0); return err }},
		{"Create", func() error { _, err := db.Create("d", nil); return err }},
		{"Search", func() error { _, _, err := db.Search("c", "before", SearchOptions{}); return err }},
		{"LockConversation", func() error {
			unlock, err := db.LockConversation(context.Background(), "c")
			if err == nil {
				unlock()
			}
			return err
		}},
	}
	proxy.Freeze()
	var wg sync.WaitGroup
	for _, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := returnsWithin(t, call.name, time.Minute, call.f)
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("%s while the connection is frozen = %v, want ErrUnavailable", call.name, err)
			}
		}()
	}
	wg.Wait()
	proxy.Thaw()

	for _, call := range calls {
		if err := returnsWithin(t, call.name, time.Minute, call.f); err != nil && !errors.Is(err, ErrExists) {
			t.Errorf("%s once the proxy relays again = %v", call.name, err)
		}
	}
	if st, err := db.Stats("c"); err != nil || st.Messages != 6 {
		t.Errorf("after the freeze: %+v, %v; want the 5 appended before and 1 after", st, err)
	}

	// The connections open now go silent for good while new ones work:
	// the listener finds its own dead, listens again on a new one and
	// wakes the waiter, which sees another store's append; every call
	// succeeds on new connections.
	waited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := db.Wait(ctx, "c", 6)
		waited <- err
	}()
	for !waiting(&db.watch) {
		time.Sleep(time.Millisecond)
	}
	proxy.Freeze()
	proxy.Strand()
	other := openWith(t, &Options{Postgres: &PostgresOptions{DSN: direct}})
	mustAppend(t, other, "c", user("from another store"))
	if err := <-waited; err != nil {
		t.Errorf("Wait across a listening connection gone silent = %v, want the other store's append", err)
	}
	for _, call := range calls {
		if err := returnsWithin(t, call.name, time.Minute, call.f); err != nil && !errors.Is(err, ErrExists) {
			t.Errorf("%s on new connections after the old ones went silent = %v", call.name, err)
		}
	}
}

// returnsWithin runs f and returns its error, failing t when f has not
// returned after limit (far longer than any bound it is meant to keep: a
// hang, not a slow call).
func returnsWithin(t *testing.T, name string, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		t.Logf("%s returned after %v: %v", name, time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(limit):
		t.Errorf("%s has not returned after %v", name, limit)
		return nil
	}
}

// waiting reports whether a waiter of w is registered.
func waiting(w *watch) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.chans) > 0
}
