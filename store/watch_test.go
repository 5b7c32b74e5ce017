package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWait: on every backend, Wait returns at once when the conversation
// already has messages after the sequence, blocks until an append
// otherwise, returns the context's error when none comes, ErrNotFound for
// an unknown conversation, and ErrClosed when the store closes under it.
func TestWait(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		db := b.open(t)
		mustCreate(t, db, "c")
		mustAppend(t, db, "c", user("one"))
		ctx := context.Background()
		if head, err := db.Wait(ctx, "c", 0); err != nil || head != 1 {
			t.Fatalf("Wait(after 0) with one message = %d, %v", head, err)
		}
		got := make(chan int64, 1)
		go func() {
			head, err := db.Wait(ctx, "c", 1)
			if err != nil {
				t.Error(err)
			}
			got <- head
		}()
		time.Sleep(50 * time.Millisecond)
		select {
		case h := <-got:
			t.Fatalf("Wait(after 1) returned %d before any append", h)
		default:
		}
		mustAppend(t, db, "c", user("two"))
		select {
		case h := <-got:
			if h != 2 {
				t.Errorf("Wait(after 1) = %d, want 2", h)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Wait did not see the append")
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if head, err := db.Wait(short, "c", 2); !errors.Is(err, context.DeadlineExceeded) || head != 2 {
			t.Errorf("Wait(after 2) with no append = %d, %v; want 2, DeadlineExceeded", head, err)
		}
		if _, err := db.Wait(ctx, "nope", 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("Wait on an unknown conversation = %v", err)
		}
		closed := make(chan error, 1)
		go func() { _, err := db.Wait(ctx, "c", 2); closed <- err }()
		time.Sleep(20 * time.Millisecond)
		db.Close()
		if err := <-closed; !errors.Is(err, ErrClosed) {
			t.Errorf("Wait across Close = %v, want ErrClosed", err)
		}
	})
}
