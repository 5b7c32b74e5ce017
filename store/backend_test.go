package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The conformance suite: tests written against a backend run unchanged on
// every kvStore implementation.

// backend makes the options of a fresh, empty store; opening the same
// options again reopens that store (for the durable backends).
type backend struct {
	name    string
	durable bool
	fresh   func(t testing.TB) Options
}

var backends = []backend{
	{"badger-disk", true, func(t testing.TB) Options { return Options{Dir: t.TempDir()} }},
	{"badger-memory", false, func(testing.TB) Options { return Options{InMemory: true} }},
	{"postgres", true, func(t testing.TB) Options { return Options{Postgres: &PostgresOptions{DSN: pgTestDSN(t)}} }},
}

// eachBackend runs f as a subtest per backend.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// open opens a fresh store of b with the tests' clock, closed at cleanup.
func (b backend) open(t testing.TB) *DB {
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

// pgBaseDSN is the test server: RLMPL_PG_DSN, else database test on
// 127.0.0.1:5432 as user postgres.
func pgBaseDSN() string {
	if dsn := os.Getenv("RLMPL_PG_DSN"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

var pgProbe = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, pgBaseDSN())
	if err != nil {
		return err
	}
	return c.Close(ctx)
})

// requirePostgres skips t when the test server is down, and fails it
// under CI=true, so CI cannot pass by skipping.
func requirePostgres(t testing.TB) {
	t.Helper()
	if err := pgProbe(); err != nil {
		msg := "PostgreSQL test server unavailable (" + pgBaseDSN() + "; set RLMPL_PG_DSN): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// pgTestDSN creates a schema of its own for t (dropped at cleanup) and
// returns a DSN whose search_path selects it.
func pgTestDSN(t testing.TB) string {
	t.Helper()
	requirePostgres(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	pgExec(t, pgBaseDSN(), "CREATE SCHEMA "+schema)
	t.Cleanup(func() { pgExec(t, pgBaseDSN(), "DROP SCHEMA "+schema+" CASCADE") })
	return withSearchPath(pgBaseDSN(), schema)
}

func withSearchPath(dsn, schema string) string {
	switch {
	case !strings.Contains(dsn, "://"):
		return dsn + " search_path=" + schema
	case strings.Contains(dsn, "?"):
		return dsn + "&search_path=" + schema
	}
	return dsn + "?search_path=" + schema
}

// pgExec runs sql on the test server outside any store.
func pgExec(t testing.TB, dsn, sql string) {
	t.Helper()
	pgScalar(t, dsn, sql)
}

// pgScalar runs sql on the test server outside any store and returns the
// first column of its first row as text ("" when there is none).
func pgScalar(t testing.TB, dsn, sql string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v string
	if err := c.QueryRow(ctx, sql).Scan(&v); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// eachDurableBackend runs f as a subtest per backend that keeps its data
// across a Close.
func eachDurableBackend(t *testing.T, f func(t *testing.T, be backend)) {
	for _, b := range backends {
		if b.durable {
			t.Run(b.name, func(t *testing.T) { f(t, b) })
		}
	}
}
