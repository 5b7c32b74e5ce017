package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestMigrationVersionsAreDense: the embedded migrations are numbered 1, 2,
// … in file order, which migrate relies on (the database's version is how
// many have been applied).
func TestMigrationVersionsAreDense(t *testing.T) {
	ms, err := schemaMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.version != i+1 {
			t.Errorf("migration %s has version %d, want %d", m.name, m.version, i+1)
		}
	}
}

// TestPostgresMigrations: ten stores opening an empty schema at once
// migrate it once; a later open applies nothing; a schema migrated by a
// newer binary is refused with ErrSchemaNewer naming both versions.
func TestPostgresMigrations(t *testing.T) {
	dsn := pgTestDSN(t)
	o := Options{Postgres: &PostgresOptions{DSN: dsn}}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(&o)
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	ms, _ := schemaMigrations()
	if got := pgScalar(t, dsn, "SELECT count(*) || ' ' || max(version) FROM rlmpl_schema_version"); got != fmt.Sprintf("%d %d", len(ms), len(ms)) {
		t.Errorf("schema versions after ten concurrent opens = %q, want %d applied once each", got, len(ms))
	}
	db := openWith(t, &o)
	mustCreate(t, db, "c")
	db.Close()

	newer := len(ms) + 1
	pgExec(t, dsn, fmt.Sprintf("INSERT INTO rlmpl_schema_version (version, name) VALUES (%d, 'from_the_future.sql')", newer))
	_, err := Open(&o)
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaNewer", err)
	}
	if want := fmt.Sprintf("version %d", newer); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}
