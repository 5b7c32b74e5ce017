package store

import (
	"path/filepath"
	"testing"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// The conformance suite: tests written against a backend run unchanged on
// every kvStore implementation.

// testBackend makes the options of a fresh, empty store; opening the same
// options again reopens that store (for the durable backends).
type testBackend struct {
	name    string
	durable bool
	fresh   func(t testing.TB) Options
}

var backends = []testBackend{
	{"badger-disk", true, func(t testing.TB) Options { return Options{Dir: t.TempDir()} }},
	{"badger-memory", false, func(testing.TB) Options { return Options{InMemory: true} }},
	{"postgres", true, func(t testing.TB) Options { return Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}} }},
	{"sqlite", true, func(t testing.TB) Options { return Options{Spec: sqliteSpec(t)} }},
}

// sqliteSpec is the spec of a fresh SQLite store in a temporary directory.
func sqliteSpec(t testing.TB) Spec {
	return Spec{Scheme: schemeSQLite, Target: filepath.Join(t.TempDir(), "store.db")}
}

// eachBackend runs f as a subtest per backend.
func eachBackend(t *testing.T, f func(t *testing.T, b testBackend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// open opens a fresh store of b with the tests' clock, closed at cleanup.
func (b testBackend) open(t testing.TB) *DB {
	t.Helper()
	o := b.fresh(t)
	return openWith(t, &o)
}

// openWith opens o with the tests' clock and synchronous indexing; the
// store is closed at cleanup.
func openWith(t testing.TB, o *Options) *DB {
	t.Helper()
	o.Now, o.IndexDelay = newClock().Now, -1
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// eachSharedBackend runs f as a subtest per backend that several
// processes may open at once.
func eachSharedBackend(t *testing.T, f func(t *testing.T, be testBackend)) {
	for _, b := range backends {
		o := b.fresh(t)
		if spec, err := o.spec(); err == nil && spec.Shared() {
			t.Run(b.name, func(t *testing.T) { f(t, b) })
		}
	}
}

// again opens the store of o a second time, as another process would
// (sharing only the database), when its backend is shared; nil otherwise.
func again(t testing.TB, o Options) *DB {
	t.Helper()
	if spec, err := o.spec(); err != nil || !spec.Shared() {
		return nil
	}
	return openWith(t, &o)
}

// eachDurableBackend runs f as a subtest per backend that keeps its data
// across a Close.
func eachDurableBackend(t *testing.T, f func(t *testing.T, be testBackend)) {
	for _, b := range backends {
		if b.durable {
			t.Run(b.name, func(t *testing.T) { f(t, b) })
		}
	}
}

// lockIndexer holds db's background indexer until unlockIndexer, so
// searches meanwhile scan the messages it has not indexed. PostgreSQL has
// no indexer to hold: a message's document commits with it.
func lockIndexer(db *DB) {
	switch s := db.search.(type) {
	case *indexer:
		s.work.Lock()
	case *sqliteSearch:
		s.work.Lock()
	}
}

func unlockIndexer(db *DB) {
	switch s := db.search.(type) {
	case *indexer:
		s.work.Unlock()
	case *sqliteSearch:
		s.work.Unlock()
	}
}
