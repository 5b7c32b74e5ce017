package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrSchemaNewer reports a PostgreSQL database whose store schema was
// migrated by a newer binary than this one: it refuses to open it rather
// than misread it.
var ErrSchemaNewer = errors.New("store: database schema is newer than this binary")

// ErrNoSchema reports a PostgreSQL connection with no schema the store
// can use: its search_path names no schema that exists, or the role may
// not create the store's tables in the one it names. The error says
// which, and what to run.
var ErrNoSchema = errors.New("store: no usable PostgreSQL schema")

// noSchema is the ErrNoSchema of a search_path that names no existing
// schema.
func noSchema(searchPath, role string) error {
	return fmt.Errorf("%w: the search_path (%s) names no schema that exists and the role may use; create one (CREATE SCHEMA rlmpl; GRANT USAGE, CREATE ON SCHEMA rlmpl TO %s) and name it in the DSN (search_path=rlmpl)",
		ErrNoSchema, searchPath, role)
}

// createDenied is the ErrNoSchema of a role that may not create tables in
// schema.
func createDenied(schema, role string) error {
	return fmt.Errorf("%w: role %s may not create the store's tables in schema %s: GRANT USAGE, CREATE ON SCHEMA %s TO %s (as the schema's owner), or name another schema in the DSN (search_path=...)",
		ErrNoSchema, role, schema, schema, role)
}

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

// SchemaStatus is a PostgreSQL store schema's version beside this
// binary's migrations ([PostgresSchemaStatus], [MigratePostgres]).
type SchemaStatus struct {
	// Schema is the PostgreSQL schema the store lives in (the DSN's
	// search_path selects it).
	Schema string
	// Role is the role the DSN connects as.
	Role string
	// Version is the newest migration applied to the database; 0 when
	// none is (an empty schema).
	Version int
	// Latest is the newest migration this binary embeds.
	Latest int
	// Applied lists the database's migrations, oldest first.
	Applied []AppliedMigration
	// Pending names the migrations this binary would apply, in order.
	Pending []string
}

// AppliedMigration is one row of the database's migration history.
type AppliedMigration struct {
	Version   int
	Name      string
	AppliedAt time.Time
}

// Newer reports a database migrated by a newer binary: [Open] and
// [MigratePostgres] refuse it with [ErrSchemaNewer].
func (s SchemaStatus) Newer() bool { return s.Version > s.Latest }

// newerError is the ErrSchemaNewer of s, naming both versions.
func (s SchemaStatus) newerError() error {
	return fmt.Errorf("%w: the database (schema %s) is at version %d, this binary knows versions up to %d; upgrade rlmpl", ErrSchemaNewer, s.Schema, s.Version, s.Latest)
}

// PostgresSchemaStatus reads the schema version of the store o names
// without changing anything (an empty schema reports version 0, every
// migration pending). A database newer than this binary is reported, not
// an error: check [SchemaStatus.Newer].
func PostgresSchemaStatus(ctx context.Context, o PostgresOptions) (SchemaStatus, error) {
	return withPostgresConn(ctx, o, schemaStatus)
}

// MigratePostgres applies the pending migrations of the store o names
// (what [Open] does first) and returns the status after them. It returns
// an error wrapping [ErrSchemaNewer] for a database migrated by a newer
// binary, changing nothing.
func MigratePostgres(ctx context.Context, o PostgresOptions) (SchemaStatus, error) {
	return withPostgresConn(ctx, o, migrateConn)
}

// withPostgresConn runs f on one connection to o's database (no pool),
// configured as the store's connections are.
func withPostgresConn(ctx context.Context, o PostgresOptions, f func(context.Context, *pgx.Conn) (SchemaStatus, error)) (SchemaStatus, error) {
	o, err := o.withDefaults()
	if err != nil {
		return SchemaStatus{}, err
	}
	cfg, err := poolConfig(o)
	if err != nil {
		return SchemaStatus{}, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return SchemaStatus{}, fmt.Errorf("store: %v: %w", o, unavailable(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st, err := f(ctx, conn)
	switch {
	case errors.Is(err, ErrNoSchema):
		err = fmt.Errorf("store: %v: %w", o, err)
	case err != nil && !errors.Is(err, ErrSchemaNewer):
		err = fmt.Errorf("store: %v: %w", o, unavailable(err))
	}
	return st, err
}

// schemaStatus reads the migration history of conn's current schema,
// creating nothing.
func schemaStatus(ctx context.Context, conn *pgx.Conn) (SchemaStatus, error) {
	ms, err := schemaMigrations()
	if err != nil {
		return SchemaStatus{}, err
	}
	var st SchemaStatus
	var schema *string
	var searchPath string
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path'), current_user, to_regclass('rlmpl_schema_version') IS NOT NULL`).Scan(
		&schema, &searchPath, &st.Role, &exists); err != nil {
		return st, err
	}
	if schema == nil {
		return st, noSchema(searchPath, st.Role)
	}
	st.Schema, st.Latest = *schema, len(ms)
	if exists {
		rows, err := conn.Query(ctx, `SELECT version, name, applied_at FROM rlmpl_schema_version ORDER BY version`)
		if err != nil {
			return st, err
		}
		for rows.Next() {
			var a AppliedMigration
			if err := rows.Scan(&a.Version, &a.Name, &a.AppliedAt); err != nil {
				rows.Close()
				return st, err
			}
			st.Applied = append(st.Applied, a)
			st.Version = max(st.Version, a.Version)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return st, err
		}
	}
	for _, m := range ms[min(st.Version, len(ms)):] {
		st.Pending = append(st.Pending, m.name)
	}
	return st, nil
}

// migrationLock is the first key of the session advisory lock held while
// migrating; the second is the schema's name hashed, so stores in other
// schemas migrate independently.
const migrationLock = 0x726c6d70 // "rlmp"

// lockMigrations takes the migration lock on conn, waiting for whoever
// holds it; unlock releases it.
func lockMigrations(ctx context.Context, conn *pgx.Conn) (unlock func(), err error) {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext(current_schema()))`, migrationLock); err != nil {
		return nil, err
	}
	return func() {
		conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext(current_schema()))`, migrationLock)
	}, nil
}

// migrateConn brings conn's schema to the newest embedded version. It
// holds an advisory lock meanwhile, so processes starting at once migrate
// once: the others wait, then find nothing to do. Each version is applied
// in its own transaction with its row in rlmpl_schema_version.
func migrateConn(ctx context.Context, conn *pgx.Conn) (SchemaStatus, error) {
	ms, err := schemaMigrations()
	if err != nil {
		return SchemaStatus{}, err
	}
	unlock, err := lockMigrations(ctx, conn)
	if err != nil {
		return SchemaStatus{}, err
	}
	defer unlock()
	st, err := schemaStatus(ctx, conn) // a schema to create in, first
	if err != nil {
		return st, err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS rlmpl_schema_version (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return SchemaStatus{}, createError(err, st)
	}
	st, err = schemaStatus(ctx, conn)
	if err != nil {
		return st, err
	}
	if st.Newer() {
		return st, st.newerError()
	}
	for _, m := range ms[st.Version:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO rlmpl_schema_version (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return st, fmt.Errorf("store: migration %s: %w", m.name, createError(err, st))
		}
	}
	return schemaStatus(ctx, conn)
}

// createError is err, or the ErrNoSchema it means: a statement that
// creates in st's schema refused for want of the privilege.
func createError(err error, st SchemaStatus) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
		return createDenied(st.Schema, st.Role)
	}
	return err
}

// migrate migrates the store's schema on one of its pool's connections.
func (p *pgKV) migrate() error {
	conn, err := p.pool.Acquire(p.ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	_, err = migrateConn(p.ctx, conn.Conn())
	return err
}

// withMigrationLock runs f on one of the pool's connections while it
// holds the migration lock: work that every process opening the store
// would otherwise repeat (pgSearch.open) is done once.
func (p *pgKV) withMigrationLock(f func(*pgx.Conn) error) error {
	conn, err := p.pool.Acquire(p.ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	unlock, err := lockMigrations(p.ctx, conn.Conn())
	if err != nil {
		return err
	}
	defer unlock()
	return f(conn.Conn())
}
