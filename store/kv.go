package store

import "errors"

// kvStore is the ordered key-value seam the store is written against, one
// of a backend's three (backend.go). It is deliberately small — point
// reads and writes, ordered range iteration in both directions, and
// serializable read-write and read-only transactions — so that another
// ordered KV (badger.go, pg.go, sqlite.go; a distributed one such as TiKV
// or FoundationDB) implements these two interfaces, with no change to the
// code above them. Keys sort bytewise; the layout lives in keys.go.
type kvStore interface {
	// View runs fn in a read-only snapshot transaction.
	View(fn func(kvTxn) error) error
	// Update runs fn in a read-write transaction and commits it; fn may be
	// run more than once if the implementation retries a conflict, and may
	// share its transaction with other Updates' fns (which then run before
	// or after it, as if serially), so it must not have effects outside
	// the transaction.
	Update(fn func(kvTxn) error) error
	// Close releases the store; it is called once.
	Close() error
	// lockWrites orders this process's writes to conversation num where
	// the backend needs it, and returns the unlock. Every write reads the
	// conversation's head inside its transaction, so the order is the
	// backend's to keep: one whose transactions run side by side
	// (PostgreSQL) queues them here, or two appends to one conversation
	// would fail serialization and retry; one whose Updates already run
	// one after another (group.go) returns a no-op, since an append queued
	// here behind another's sync could not share it.
	lockWrites(num uint64) (unlock func())
}

// kvTxn is a transaction of a [kvStore].
type kvTxn interface {
	// Get returns a copy of the value of key, or errKeyNotFound.
	Get(key []byte) ([]byte, error)
	// Set writes key = value (both are retained until commit; do not reuse).
	Set(key, value []byte) error
	// Delete removes key.
	Delete(key []byte) error
	// Iterate calls fn for each key k with lo <= k < hi in ascending order
	// (descending when reverse) until fn returns false or an error, which
	// Iterate returns. key and value are valid only during the call.
	Iterate(lo, hi []byte, reverse bool, fn func(key, value []byte) (bool, error)) error
}

// errKeyNotFound is the kvTxn.Get miss. It never escapes the package.
var errKeyNotFound = errors.New("store: kv: key not found")
