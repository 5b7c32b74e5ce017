package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rlmpl/rlmpl/store/pgtest"
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
	dsn := pgtest.DSN(t)
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
	if got := pgtest.Scalar(t, dsn, "SELECT count(*) || ' ' || max(version) FROM rlmpl_schema_version"); got != fmt.Sprintf("%d %d", len(ms), len(ms)) {
		t.Errorf("schema versions after ten concurrent opens = %q, want %d applied once each", got, len(ms))
	}
	db := openWith(t, &o)
	mustCreate(t, db, "c")
	db.Close()

	newer := len(ms) + 1
	pgtest.Exec(t, dsn, fmt.Sprintf("INSERT INTO rlmpl_schema_version (version, name) VALUES (%d, 'from_the_future.sql')", newer))
	_, err := Open(&o)
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaNewer", err)
	}
	if want := fmt.Sprintf("version %d", newer); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}

// TestPostgresStatementTimeout: a statement that waits longer than
// StatementTimeout (here on a lock another session holds) ends with an
// error instead of hanging the caller.
func TestPostgresStatementTimeout(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := openWith(t, &Options{Postgres: &PostgresOptions{DSN: dsn, StatementTimeout: 200 * time.Millisecond}})
	mustCreate(t, db, "c")
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE rlmpl_kv IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = db.Append("c", user("blocked"), AppendOptions{})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("Append behind a lock = %v, want a statement timeout (57014)", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Append took %v with a 200ms statement timeout", d)
	}
}

// TestPostgresSearchSeesOtherProcesses: two stores open on one database
// (as two processes are: nothing shared but the database). A search in
// one finds what the other appended after the first had already read the
// conversation, ranked and exact, in one conversation and in all.
func TestPostgresSearchSeesOtherProcesses(t *testing.T) {
	o := Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}}
	a := openWith(t, &o)
	b := openWith(t, &Options{Postgres: o.Postgres})
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

// TestPostgresCreateAndIdempotencyAcrossStores: two stores on one database
// (two processes' worth of in-memory state) race to create the same ids
// and to append under the same idempotency keys: each id is created once
// with its own conversation number, each key appends once.
func TestPostgresCreateAndIdempotencyAcrossStores(t *testing.T) {
	o := Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}}
	dbs := []*DB{openWith(t, &o), openWith(t, &Options{Postgres: o.Postgres})}
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

// TestCopyBetweenBackends: a conversation exported with its documents from
// badger and imported into PostgreSQL (and back) exports again byte for
// byte: messages with their envelope (time, session, metadata) and every
// document version travel losslessly.
func TestCopyBetweenBackends(t *testing.T) {
	from := openWith(t, &Options{InMemory: true})
	mustCreate(t, from, "c")
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	if _, err := from.Append("c", user("the port is 8443"), AppendOptions{Time: said, Session: "s1",
		Metadata: []KV{{"k", []byte(`{"a":1}`)}}}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, from, "c", assistant("noted"))
	for _, body := range []string{`{"v":1}`, `{"v":2}`} {
		if _, err := from.PutDoc("c", DocPut{Collection: "warm", Key: "range_1_2", Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	if err := from.Export("c", &want, ExportOptions{Documents: true}); err != nil {
		t.Fatal(err)
	}
	pg := openWith(t, &Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}})
	back := openWith(t, &Options{InMemory: true})
	for _, to := range []*DB{pg, back} {
		mustCreate(t, to, "c")
		if _, err := to.Import("c", bytes.NewReader(want.Bytes()), ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := to.Export("c", &got, ExportOptions{Documents: true}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("export after the copy:\n%s\nwant:\n%s", got.String(), want.String())
		}
		want = got
	}
}

// TestPostgresSchemaStatus: status reads without writing (an empty schema
// stays empty: version 0, every migration pending); MigratePostgres
// applies them; a newer database is reported by status and refused by
// MigratePostgres; an unreachable server is ErrUnavailable.
func TestPostgresSchemaStatus(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	o := PostgresOptions{DSN: dsn}
	ms, _ := schemaMigrations()
	st, err := PostgresSchemaStatus(ctx, o)
	if err != nil || st.Version != 0 || st.Latest != len(ms) || len(st.Pending) != len(ms) || st.Newer() {
		t.Fatalf("status of an empty schema = %+v, %v", st, err)
	}
	if got := pgtest.Scalar(t, dsn, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"); got != "0" {
		t.Errorf("status created %s tables", got)
	}
	st, err = MigratePostgres(ctx, o)
	if err != nil || st.Version != len(ms) || len(st.Pending) != 0 || len(st.Applied) != len(ms) || st.Applied[0].Name != ms[0].name {
		t.Fatalf("MigratePostgres = %+v, %v", st, err)
	}
	pgtest.Exec(t, dsn, fmt.Sprintf("INSERT INTO rlmpl_schema_version (version, name) VALUES (%d, 'later.sql')", len(ms)+1))
	if st, err = PostgresSchemaStatus(ctx, o); err != nil || !st.Newer() {
		t.Errorf("status of a newer schema = %+v, %v; want Newer", st, err)
	}
	if _, err = MigratePostgres(ctx, o); !errors.Is(err, ErrSchemaNewer) {
		t.Errorf("MigratePostgres of a newer schema = %v, want ErrSchemaNewer", err)
	}
	down := PostgresOptions{DSN: "postgres://postgres@127.0.0.1:1/test?sslmode=disable", ConnectTimeout: time.Second}
	if _, err = PostgresSchemaStatus(ctx, down); !errors.Is(err, ErrUnavailable) {
		t.Errorf("status of a server that is not there = %v, want ErrUnavailable", err)
	}
}

// TestPostgresWaitSeesOtherStores: two stores on one database (two
// processes' worth: they share only the database); a Wait in one returns
// when the other appends or imports (NOTIFY), and a rolled-back write
// announces nothing.
func TestPostgresWaitSeesOtherStores(t *testing.T) {
	o := Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}}
	a := openWith(t, &o)
	b := openWith(t, &Options{Postgres: o.Postgres})
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
	// rolls back: nothing is announced, the waiter keeps waiting.
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

// TestRedactDSN: every password a DSN can carry is gone, and the rest is
// kept to name the store.
func TestRedactDSN(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:SECRET@db:5432/x?sslmode=disable", "postgres://u:xxxxx@db:5432/x?sslmode=disable"},
		{"postgresql://u:SE:C@RET@db/x", "postgresql://u:xxxxx@db/x"},
		{"postgres://u@db/x?password=SECRET&sslmode=disable", "postgres://u@db/x?password=xxxxx&sslmode=disable"},
		{"postgres://u:SECRET@db/x?sslpassword=SECRET2", "postgres://u:xxxxx@db/x?sslpassword=xxxxx"},
		{"postgres://db/x?search_path=a@b", "postgres://db/x?search_path=a@b"},
		{"host=db user=u password=SECRET dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"host=db password = 'SE CR\\'ET' dbname=x", "host=db password = xxxxx dbname=x"},
		{"host=db PASSWORD=SECRET", "host=db PASSWORD=xxxxx"},
		{"postgres://u:SECRET@[::1", "postgres://u:xxxxx@[::1"},
		{"host=db dbname=x", "host=db dbname=x"},
	} {
		if got := RedactDSN(tc.dsn); got != tc.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tc.dsn, got, tc.want)
		}

	}
}

// TestPostgresUnusableSchema: a search_path that names no schema, or a
// schema the role may use but not create in, fails Open, MigratePostgres
// and the status with ErrNoSchema saying what to run (never SQLSTATE
// 3F000 or 42501 alone), and creates nothing.
func TestPostgresUnusableSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Scalar(t, dsn, "SELECT current_schema()")
	role := "r" + schema // unique as the schema is
	pgtest.Exec(t, pgtest.BaseDSN(), "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		pgtest.Exec(t, pgtest.BaseDSN(), "DROP OWNED BY "+role)
		pgtest.Exec(t, pgtest.BaseDSN(), "DROP ROLE "+role)
	})
	pgtest.Exec(t, pgtest.BaseDSN(), "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	asRole, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	roleDSN := strings.Replace(dsn, "://"+asRole.User+"@", "://"+role+"@", 1)
	cases := []struct {
		name, dsn, want string
	}{
		{"no schema", pgtest.WithSearchPath(pgtest.BaseDSN(), schema+"_missing"), "CREATE SCHEMA rlmpl; GRANT USAGE, CREATE ON SCHEMA rlmpl TO " + asRole.User},
		{"no create privilege", roleDSN, "GRANT USAGE, CREATE ON SCHEMA " + schema + " TO " + role},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := PostgresOptions{DSN: tc.dsn, ConnectTimeout: 5 * time.Second}
			_, openErr := Open(&Options{Postgres: &o})
			_, migrateErr := MigratePostgres(ctx, o)
			for what, err := range map[string]error{"Open": openErr, "MigratePostgres": migrateErr} {
				if !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SQLSTATE") {
					t.Errorf("%s = %v, want ErrNoSchema saying %q", what, err, tc.want)
				}
			}
			if tc.name == "no schema" {
				if _, err := PostgresSchemaStatus(ctx, o); !errors.Is(err, ErrNoSchema) {
					t.Errorf("status = %v, want ErrNoSchema", err)
				}
			}
		})
	}
	if got := pgtest.Scalar(t, dsn, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"); got != "0" {
		t.Errorf("the refused opens created %s tables", got)
	}
}
