package store

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrSchemaNewer reports a PostgreSQL database whose store schema was
// migrated by a newer binary than this one: it refuses to open it rather
// than misread it.
var ErrSchemaNewer = errors.New("store: database schema is newer than this binary")

// migrations are the PostgreSQL schema versions, one file each,
// NNNN_name.sql, applied in order. A released file never changes: a change
// is a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// schemaMigrations returns the embedded migrations in version order; their
// versions are 1, 2, … with no gap (checked by a test).
func schemaMigrations() ([]migration, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, n := range names { // fs.Glob sorts
		base := strings.TrimPrefix(n, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("store: migration %s: no version prefix", base)
		}
		b, err := migrations.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	return ms, nil
}

// migrationLock is the first key of the session advisory lock held while
// migrating; the second is the schema's name hashed, so stores in other
// schemas migrate independently.
const migrationLock = 0x726c6d70 // "rlmp"

// migrate brings the connection's schema to the newest embedded version.
// It holds an advisory lock meanwhile, so processes starting at once
// migrate once: the others wait, then find nothing to do. Each version is
// applied in its own transaction with its row in rlmpl_schema_version.
func (p *pgKV) migrate() error {
	ms, err := schemaMigrations()
	if err != nil {
		return err
	}
	conn, err := p.pool.Acquire(p.ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(p.ctx, `SELECT pg_advisory_lock($1, hashtext(current_schema()))`, migrationLock); err != nil {
		return err
	}
	defer conn.Exec(p.ctx, `SELECT pg_advisory_unlock($1, hashtext(current_schema()))`, migrationLock)
	if _, err := conn.Exec(p.ctx, `CREATE TABLE IF NOT EXISTS rlmpl_schema_version (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	var have int
	if err := conn.QueryRow(p.ctx, `SELECT coalesce(max(version), 0) FROM rlmpl_schema_version`).Scan(&have); err != nil {
		return err
	}
	if want := len(ms); have > want {
		return fmt.Errorf("%w: the database is at version %d, this binary knows versions up to %d; upgrade rlmpl", ErrSchemaNewer, have, want)
	}
	for _, m := range ms[have:] {
		err := pgx.BeginFunc(p.ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(p.ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(p.ctx, `INSERT INTO rlmpl_schema_version (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", m.name, err)
		}
	}
	return nil
}
