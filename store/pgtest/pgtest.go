// Package pgtest gives tests a PostgreSQL schema of their own on the test
// server, so that the store's PostgreSQL backend is tested by the same
// suites as badger, in every package that opens stores.
//
// The server is RLMPL_PG_DSN, else database test on 127.0.0.1:5432 as user
// postgres. When it is unreachable a test skips with the reason, except
// under CI=true, where it fails: CI cannot pass by skipping.
package pgtest

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

// BaseDSN is the test server's DSN.
func BaseDSN() string {
	if dsn := os.Getenv("RLMPL_PG_DSN"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

var probe = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, BaseDSN())
	if err != nil {
		return err
	}
	return c.Close(ctx)
})

// Require skips t when the test server is unreachable, and fails it under
// CI=true.
func Require(t testing.TB) {
	t.Helper()
	if err := probe(); err != nil {
		msg := "PostgreSQL test server unavailable (" + BaseDSN() + "; set RLMPL_PG_DSN): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// DSN creates a schema of its own for t (dropped at cleanup) and returns a
// DSN whose search_path selects it.
func DSN(t testing.TB) string {
	t.Helper()
	Require(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	Exec(t, BaseDSN(), "CREATE SCHEMA "+schema)
	t.Cleanup(func() { Exec(t, BaseDSN(), "DROP SCHEMA "+schema+" CASCADE") })
	return WithSearchPath(BaseDSN(), schema)
}

// WithSearchPath returns dsn (a URL or a keyword string) selecting schema.
func WithSearchPath(dsn, schema string) string {
	switch {
	case !strings.Contains(dsn, "://"):
		return dsn + " search_path=" + schema
	case strings.Contains(dsn, "?"):
		return dsn + "&search_path=" + schema
	}
	return dsn + "?search_path=" + schema
}

// Exec runs sql on dsn outside any store.
func Exec(t testing.TB, dsn, sql string) {
	t.Helper()
	Scalar(t, dsn, sql)
}

// Scalar runs sql on dsn outside any store and returns the first column of
// its first row as text ("" when there is none).
func Scalar(t testing.TB, dsn, sql string) string {
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
