package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of the stores several processes share (PostgreSQL, SQLite): two
// DBs opened on one store, as two processes open it, sharing nothing but
// the database.

// TestSearchSeesOtherProcesses: on every shared backend, two stores open
// on one database (as two processes are: nothing shared but the database). A search in
// one finds what the other appended after the first had already read the
// conversation, ranked and exact, in one conversation and in all.
func TestSearchSeesOtherProcesses(t *testing.T) { eachSharedBackend(t, testSearchSeesOtherProcesses) }

func testSearchSeesOtherProcesses(t *testing.T, be testBackend) {
	o := be.fresh(t)
	a := openWith(t, &o)
	b := again(t, o)
	mustCreate(t, a, "c")
	mustAppend(t, a, "c", user("the first message"))
	if hits, _, err := b.Search("c", "first", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Fatalf("b's first search = %v, %v", hits, err)
	}
	mustAppend(t, a, "c", user("the staging port is 8443"))
	for _, q := range []struct {
		conv string
		opts SearchOptions
	}{{"c", SearchOptions{}}, {"c", SearchOptions{Exact: true}}, {"", SearchOptions{}}} {
		hits, _, err := b.Search(q.conv, "staging port", q.opts)
		if err != nil || len(hits) != 1 || hits[0].Seq != 2 {
			t.Errorf("b.Search(%q, staging port, %+v) = %v, %v; want a's append, seq 2", q.conv, q.opts, hits, err)
		}
	}
	if err := b.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if hits, _, err := b.Search("c", "staging", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("after b indexed a's append: %v, %v", hits, err)
	}
}

// TestCreateAndIdempotencyAcrossStores: on every shared backend, two
// stores on one database (two processes' worth of in-memory state) race to create the same ids
// and to append under the same idempotency keys: each id is created once
// with its own conversation number, each key appends once.
func TestCreateAndIdempotencyAcrossStores(t *testing.T) {
	eachSharedBackend(t, testCreateAndIdempotencyAcrossStores)
}

func testCreateAndIdempotencyAcrossStores(t *testing.T, be testBackend) {
	o := be.fresh(t)
	dbs := []*DB{openWith(t, &o), again(t, o)}
	const ids, keys = 10, 20
	var wg sync.WaitGroup
	created := make([][]bool, len(dbs))
	errs := make(chan error, len(dbs)*(ids+keys))
	for d, db := range dbs {
		created[d] = make([]bool, ids)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				_, err := db.Create(fmt.Sprint("conv", i), nil)
				if err == nil {
					created[d][i] = true
				} else if !errors.Is(err, ErrExists) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	nums := map[uint64]bool{}
	for i := range ids {
		if created[0][i] == created[1][i] {
			t.Errorf("conv%d created by both stores or by neither: %v %v", i, created[0][i], created[1][i])
		}
		cs, err := dbs[1].conv(fmt.Sprint("conv", i))
		if err != nil {
			t.Fatal(err)
		}
		if nums[cs.num] {
			t.Errorf("conversation number %d given twice", cs.num)
		}
		nums[cs.num] = true
	}
	for _, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				text := fmt.Sprint("keyed ", k)
				if _, err := db.Append("conv0", user(text), AppendOptions{IdempotencyKey: text}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st, err := dbs[0].Stats("conv0"); err != nil || st.Messages != keys {
		t.Errorf("conv0 after both stores appended %d keys: %+v, %v", keys, st, err)
	}
}

// TestWaitSeesOtherStores: on every shared backend, two stores on one
// database (two processes' worth: they share only the database); a Wait
// in one returns when the other appends or imports (PostgreSQL's NOTIFY,
// SQLite's data version), and a rolled-back write wakes no waiter for
// good: it keeps waiting.
func TestWaitSeesOtherStores(t *testing.T) { eachSharedBackend(t, testWaitSeesOtherStores) }

func testWaitSeesOtherStores(t *testing.T, be testBackend) {
	o := be.fresh(t)
	a := openWith(t, &o)
	b := again(t, o)
	mustCreate(t, a, "c")
	ctx := context.Background()
	for i, write := range []func(){
		func() { mustAppend(t, a, "c", user("from a")) },
		func() {
			if _, err := a.Import("c", strings.NewReader(`{"role":"user","content":"imported"}`+"\n"), ImportOptions{}); err != nil {
				t.Error(err)
			}
		},
	} {
		got := make(chan int64, 1)
		go func() {
			h, err := b.Wait(ctx, "c", int64(i))
			if err != nil {
				t.Error(err)
			}
			got <- h
		}()
		time.Sleep(100 * time.Millisecond)
		write()
		select {
		case h := <-got:
			if h != int64(i+1) {
				t.Errorf("b.Wait(after %d) = %d", i, h)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("b did not see a's write %d", i)
		}
	}
	// A failed append (an idempotency key reused for other content)
	// rolls back: the waiter keeps waiting.
	mustAppendKey := func(text string) error {
		_, err := a.Append("c", user(text), AppendOptions{IdempotencyKey: "k"})
		return err
	}
	if err := mustAppendKey("x"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	go func() { time.Sleep(50 * time.Millisecond); _ = mustAppendKey("y") }()
	if h, err := b.Wait(short, "c", 3); !errors.Is(err, context.DeadlineExceeded) || h != 3 {
		t.Errorf("b.Wait across a refused append = %d, %v", h, err)
	}
}
