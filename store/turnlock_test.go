package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// lockStores opens a fresh store of b holding conversation c, and the
// stores that contend for its locks: itself and, on PostgreSQL, a second
// one (another process's worth).
func lockStores(t *testing.T, b backend) (*DB, []*DB) {
	o := b.fresh(t)
	db := openWith(t, &o)
	others := []*DB{db}
	if o.Postgres != nil {
		others = append(others, openWith(t, &Options{Postgres: o.Postgres}))
	}
	mustCreate(t, db, "c")
	return db, others
}

// TestLockConversation: on every backend, a second holder of a
// conversation's turn lock waits for the first's unlock, a waiter gives
// up when its context ends, and other conversations are not held up. On
// PostgreSQL a second store (another process's worth) waits too.
func TestLockConversation(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		db, others := lockStores(t, b)
		mustCreate(t, db, "d")
		ctx := context.Background()
		unlock, err := db.LockConversation(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range others {
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			if _, err := other.LockConversation(short, "c"); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a second lock of c while held = %v, want DeadlineExceeded", err)
			}
			cancel()
			u, err := other.LockConversation(ctx, "d")
			if err != nil {
				t.Fatalf("lock of d while c is held: %v", err)
			}
			u()
		}
		got := make(chan error, 1)
		go func() {
			u, err := others[len(others)-1].LockConversation(ctx, "c")
			if err == nil {
				u()
			}
			got <- err
		}()
		time.Sleep(50 * time.Millisecond)
		unlock()
		select {
		case err := <-got:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter did not get the lock after unlock")
		}
		if _, err := db.LockConversation(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("lock of an unknown conversation = %v", err)
		}
	})
}

// TestLockConversationOutwaitsStatementTimeout: on PostgreSQL a turn
// waits for the lock in statements of at most the statement timeout each
// (so that a frozen connection is found), and still gets it after a wait
// many times longer.
func TestLockConversationOutwaitsStatementTimeout(t *testing.T) {
	dsn := pgtest.DSN(t)
	o := Options{Postgres: &PostgresOptions{DSN: dsn, StatementTimeout: 100 * time.Millisecond}}
	db, other := openWith(t, &o), openWith(t, &Options{Postgres: o.Postgres})
	mustCreate(t, db, "c")
	unlock, err := db.LockConversation(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := other.LockConversation(context.Background(), "c")
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(time.Second)
	select {
	case err := <-got:
		t.Fatalf("a lock held by another store returned %v before its unlock", err)
	default:
	}
	unlock()
	if err := <-got; err != nil {
		t.Errorf("a wait of ten statement timeouts for the turn lock = %v, want the lock", err)
	}
}

// TestTryLockConversation: on every backend, a try while a turn of this
// process or (PostgreSQL) of another holds the lock says so at once, and
// succeeds once it is released; the lock it takes is a turn lock.
func TestTryLockConversation(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		db, others := lockStores(t, b)
		ctx := context.Background()
		unlock, err := db.LockConversation(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range others {
			if u, ok, err := other.TryLockConversation(ctx, "c"); ok || err != nil || u != nil {
				t.Fatalf("a try while the lock is held = %t, %v", ok, err)
			}
		}
		unlock()
		for _, other := range others {
			u, ok, err := other.TryLockConversation(ctx, "c")
			if !ok || err != nil {
				t.Fatalf("a try of a free lock = %t, %v", ok, err)
			}
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			if _, err := db.LockConversation(short, "c"); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a lock while a try holds it = %v, want DeadlineExceeded", err)
			}
			cancel()
			u()
		}
		if _, _, err := db.TryLockConversation(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("try of an unknown conversation = %v", err)
		}
	})
}
