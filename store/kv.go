package store

import (
	"bytes"
	"errors"
	"slices"
)

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

// kvReadAhead holds key ranges a transaction read ahead in one query
// (PostgreSQL's and SQLite's prefetch of what a ranked search reads next:
// a hit, its neighbours, their token counts), served to Get and Iterate
// without a round trip or a statement each. A write drops them.
type kvReadAhead struct{ read []readAhead }

// readAhead is one key range read ahead, its rows in key order.
type readAhead struct {
	lo, hi     []byte
	keys, vals [][]byte
}

// start adds the ranges [lo, hi) (each hi non-nil), to be filled by add.
func (a *kvReadAhead) start(ranges [][2][]byte) kvReadAheadBatch {
	first := len(a.read)
	for _, r := range ranges {
		a.read = append(a.read, readAhead{lo: r[0], hi: r[1]})
	}
	return kvReadAheadBatch{a, first}
}

// kvReadAheadBatch fills the ranges of one start.
type kvReadAheadBatch struct {
	a     *kvReadAhead
	first int
}

// add appends row (key, value), in key order, to the i-th range.
func (b kvReadAheadBatch) add(i int, key, value []byte) {
	ra := &b.a.read[b.first+i]
	ra.keys, ra.vals = append(ra.keys, key), append(ra.vals, value)
}

func (a *kvReadAhead) drop() { a.read = nil }

// covering returns the range read ahead that holds [lo, hi), if any.
func (a *kvReadAhead) covering(lo, hi []byte) *readAhead {
	for i := range a.read {
		ra := &a.read[i]
		if hi != nil && bytes.Compare(ra.lo, lo) <= 0 && bytes.Compare(hi, ra.hi) <= 0 {
			return ra
		}
	}
	return nil
}

// get is kvTxn.Get from a range read ahead; held is false when none
// holds key.
func (a *kvReadAhead) get(key []byte) (held bool, v []byte, err error) {
	ra := a.covering(key, append(key[:len(key):len(key)], 0))
	if ra == nil {
		return false, nil, nil
	}
	i, found := slices.BinarySearchFunc(ra.keys, key, bytes.Compare)
	if !found {
		return true, nil, errKeyNotFound
	}
	return true, slices.Clone(ra.vals[i]), nil
}

// iterate is kvTxn.Iterate over a range read ahead; done is false when
// none holds [lo, hi).
func (a *kvReadAhead) iterate(lo, hi []byte, reverse bool, fn func(key, value []byte) (bool, error)) (done bool, err error) {
	ra := a.covering(lo, hi)
	if ra == nil {
		return false, nil
	}
	i, _ := slices.BinarySearchFunc(ra.keys, lo, bytes.Compare)
	j, _ := slices.BinarySearchFunc(ra.keys, hi, bytes.Compare)
	for n := range j - i {
		k := i + n
		if reverse {
			k = j - 1 - n
		}
		if more, err := fn(ra.keys[k], ra.vals[k]); err != nil || !more {
			return true, err
		}
	}
	return true, nil
}

// iteratePaged is kvTxn.Iterate for a backend that reads ranges with SQL
// statements: page reads up to n rows of [lo, hi) in order, in pages of
// 64 rows doubling to 4096, so a caller that stops early reads little,
// and fn runs with no statement open, free to read and write the
// transaction.
func iteratePaged(lo, hi []byte, reverse bool, page func(lo, hi []byte, reverse bool, n int) (keys, vals [][]byte, err error),
	fn func(key, value []byte) (bool, error)) error {
	lo = append([]byte{}, lo...) // never nil: the drivers send nil as NULL
	for n := 64; ; n = min(2*n, 4096) {
		keys, vals, err := page(lo, hi, reverse, n)
		if err != nil {
			return err
		}
		for i := range keys {
			if more, err := fn(keys[i], vals[i]); err != nil || !more {
				return err
			}
		}
		if len(keys) < n {
			return nil
		}
		last := keys[len(keys)-1]
		if reverse {
			hi = last
		} else {
			lo = append(bytes.Clone(last), 0) // the smallest key after last
		}
	}
}
