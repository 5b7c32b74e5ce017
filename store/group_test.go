package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Concurrent appends share commits (group.go) without mixing up their
// outcomes: every writer's messages land densely in its conversation, and a
// reused idempotency key fails that append alone, not the others that
// shared its transaction.
func TestGroupCommitKeepsOutcomesApart(t *testing.T) {
	db := openDir(t, t.TempDir())
	defer db.Close()
	const writers, each = 8, 60
	for w := range writers {
		mustCreate(t, db, fmt.Sprint("c", w))
		if _, err := db.Append(fmt.Sprint("c", w), user("seed"), AppendOptions{IdempotencyKey: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	mismatches := make([]int, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv := fmt.Sprint("c", w)
			for i := range each {
				opts := AppendOptions{}
				if i%10 == 0 {
					opts.IdempotencyKey = "k" // reused with other content: must fail alone
				}
				_, err := db.Append(conv, user(fmt.Sprintf("%s message %d", conv, i)), opts)
				switch {
				case opts.IdempotencyKey != "" && errors.Is(err, ErrIdempotencyMismatch):
					mismatches[w]++
				case err != nil:
					errs <- fmt.Errorf("%s append %d: %w", conv, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		conv := fmt.Sprint("c", w)
		if mismatches[w] != each/10 {
			t.Errorf("%s: %d idempotency mismatches, want %d", conv, mismatches[w], each/10)
		}
		want := 1 + each - each/10
		if got := countMessages(t, db, conv); got != want {
			t.Errorf("%s: %d messages, want %d", conv, got, want)
		}
		// Dense, in order, each writer's own text.
		for seq := int64(2); seq <= int64(want); seq++ {
			r, err := db.Message(conv, seq)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Message.Content.PlainText(); len(got) < len(conv) || got[:len(conv)] != conv {
				t.Fatalf("%s seq %d holds %q", conv, seq, got)
			}
		}
	}
}
