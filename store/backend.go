package store

import (
	"context"
	"time"
)

// A backend is where the store's bytes live. The store is written against
// three seams, and a backend gives one implementation of each, chosen once
// when [Open] reads the spec: nothing above them asks which backend it has.
//
//   - kvStore (kv.go): ordered keys and values in transactions — the log,
//     heads, documents, everything but search;
//   - searcher (below): how the messages are made searchable and ranked,
//     with the one formula of rank.go;
//   - peers (below): how a store meets the other processes that open it
//     (their appends, their turns).
//
// A new backend is one file (or two) that implements them and registers
// its scheme (spec.go), and one row of the conformance suite
// (backend_test.go): badger.go with index.go, pg.go with pgsearch.go,
// sqlite.go with sqlitesearch.go.
type backend struct {
	kv    kvStore
	peers peers
	// search makes the backend's searcher once the DB over kv exists: it
	// reads the log through the DB.
	search func(db *DB) (searcher, error)
	// tooLarge refuses an encoded message of n bytes the backend cannot
	// keep (nil: any size).
	tooLarge func(n int) error
}

// searcher is a backend's ranked search: where the documents of the
// messages live, how they are kept up with the log, and how a query is
// ranked over them. Every implementation scores with rank.go's plan, so
// the same messages get the same hits, order and scores on every backend
// (TestRanksAsBadger).
type searcher interface {
	// add is called in the transaction that writes message r of
	// conversation num, so a searcher whose documents live in the
	// backend's transactions commits them with the message.
	add(t kvTxn, num uint64, r Record) error
	// appended is called once writes to cs have committed, so a searcher
	// that indexes on its own schedule can queue them.
	appended(cs *convState)
	// search returns the ranked hits of terms in conversation cs (nil:
	// every conversation) as of snapshot t — every message committed
	// before t began, indexed or not — at least Offset+MaxResults+1 when
	// there are that many, and the query words dropped as common.
	search(t kvTxn, cs *convState, terms []queryTerm, opts SearchOptions) ([]Hit, []string, error)
	// waitIndexed blocks until every message appended before the call is
	// in the index searches read first, or timeout passes ([DB.WaitIndexed]).
	waitIndexed(timeout time.Duration) error
	// rebuild starts rebuilding the documents from the log ([DB.Reindex]
	// then waits for waitIndexed).
	rebuild() error
	// wrote is told that a call wrote n messages (an import), so the
	// backend can refresh what it plans queries with.
	wrote(n int)
	close() error
}

// peers is how a store meets the other processes that open it: their
// appends wake this one's waiters, and a conversation's turns take turns
// across them. A store no other process can open (badger: its directory
// lock) has none (alone).
type peers interface {
	// listen starts delivering the numbers of conversations whose head
	// another process (or this one) committed to changed, and calls lost
	// after a gap in which changes may have been missed (or when the
	// backend cannot say which conversations changed). It returns once
	// listening, or the error that prevents it; calling it again is a
	// no-op. Delivery stops at Close.
	listen(changed func(num uint64), lost func()) error
	// lockTurn blocks until this process holds the cross-process turn
	// lock of conversation id (number num), or ctx ends. The caller holds
	// the conversation's in-process lock already.
	lockTurn(ctx context.Context, id string, num uint64) (unlock func(), err error)
	// tryLockTurn takes the lock only if no process holds it: ok is
	// false, and unlock nil, when one does.
	tryLockTurn(ctx context.Context, id string, num uint64) (unlock func(), ok bool, err error)
}

// alone is the peers of a store no other process opens.
type alone struct{}

func (alone) listen(func(uint64), func()) error { return nil }

func (alone) lockTurn(context.Context, string, uint64) (func(), error) { return func() {}, nil }

func (alone) tryLockTurn(context.Context, string, uint64) (func(), bool, error) {
	return func() {}, true, nil
}
