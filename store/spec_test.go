package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseSpec: the one parser of store specs reads every form, and an
// error names the part that is wrong without a password in it.
func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Spec
		err  string // a part of the error; "" for none
	}{
		{"memory", Spec{Scheme: "memory"}, ""},
		{"memory:", Spec{Scheme: "memory"}, ""},
		{"default", Spec{Scheme: "badger", Target: "default"}, ""},
		{"/var/lib/rlmpl/agent", Spec{Scheme: "badger", Target: "/var/lib/rlmpl/agent"}, ""},
		{"badger:memory", Spec{Scheme: "badger", Target: "memory"}, ""},
		{"BADGER:x", Spec{Scheme: "badger", Target: "x"}, ""},
		{"my store:2", Spec{Scheme: "badger", Target: "my store:2"}, ""},
		{`C:\stores\a`, Spec{Scheme: "badger", Target: `C:\stores\a`}, ""},
		{"sqlite:agent.db", Spec{Scheme: "sqlite", Target: "agent.db"}, ""},
		{"sqlite:/tmp/a b.db", Spec{Scheme: "sqlite", Target: "/tmp/a b.db"}, ""},
		{"postgres://u:pw@h/db?search_path=a", Spec{Scheme: "postgres", Target: "postgres://u:pw@h/db?search_path=a"}, ""},
		{"postgresql://h/db", Spec{Scheme: "postgres", Target: "postgresql://h/db"}, ""},
		{"postgres:host=h dbname=d", Spec{Scheme: "postgres", Target: "host=h dbname=d"}, ""},
		{"", Spec{}, "empty store spec"},
		{"  ", Spec{}, "empty store spec"},
		{"sqlite:", Spec{}, "names no file (sqlite:PATH)"},
		{"badger:", Spec{}, "names no directory"},
		{"memory:x", Spec{}, "memory takes nothing after it"},
		{"postgres:", Spec{}, "names no database"},
		{"sqlit:x.db", Spec{}, `unknown scheme "sqlit"`},
		{"postgress://u:secret@h/db", Spec{}, `unknown scheme "postgress" in "postgress://u:xxxxx@h/db" (known: badger, memory, postgres, postgresql, sqlite)`},
		{"sqlite:a\x00b", Spec{}, "holds no NUL byte"},
	} {
		got, err := ParseSpec(tc.text)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseSpec(%q) = %v", tc.text, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalid)):
			t.Errorf("ParseSpec(%q) = %v, %v; want an ErrInvalid saying %q", tc.text, got, err, tc.err)
		case tc.err != "" && strings.Contains(err.Error(), "secret"):
			t.Errorf("ParseSpec(%q): the error shows the password: %v", tc.text, err)
		case got != tc.want:
			t.Errorf("ParseSpec(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
		if err != nil {
			continue
		}
		// The text of a spec reads back as the spec (passwords aside).
		if back, err := ParseSpec(got.String()); err != nil || back != got && !strings.Contains(got.Target, "pw@") {
			t.Errorf("ParseSpec(%q).String() = %q reads back as %+v, %v", tc.text, got.String(), back, err)
		}
	}
	if s, _ := ParseSpec("postgres://u:pw@h/db"); strings.Contains(s.String(), "pw") {
		t.Errorf("String() of a DSN with a password = %q", s)
	}
	if s, err := NewSpec("sqlite", "a.db"); err != nil || s != (Spec{Scheme: "sqlite", Target: "a.db"}) {
		t.Errorf("NewSpec(sqlite, a.db) = %+v, %v", s, err)
	}
	if _, err := NewSpec("disk", "a"); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewSpec(disk, a) = %v, want ErrInvalid", err)
	}
	if got := (Spec{Scheme: "badger", Target: "sqlite:x"}).String(); got != "badger:sqlite:x" {
		t.Errorf("a badger directory named like a spec is written %q", got)
	}
}

// TestSpecOptions: Options take a spec or one of its Go shorthands, never
// two, and a PostgreSQL pool only with a postgres spec.
func TestSpecOptions(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{
		{Spec: Spec{Scheme: "sqlite", Target: filepath.Join(dir, "a.db")}, Dir: dir},
		{Spec: Spec{Scheme: "memory"}, InMemory: true},
		{Spec: Spec{Scheme: "sqlite", Target: filepath.Join(dir, "a.db")}, Postgres: &PostgresOptions{MaxConns: 2}},
		{Spec: Spec{Scheme: "nosuch", Target: "x"}},
		{Spec: Spec{Scheme: "sqlite"}},
	} {
		if _, err := Open(&o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(%+v) = %v, want ErrInvalid", o, err)
		}
	}
	db, err := Open(&Options{Spec: Spec{Scheme: "memory"}})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// TestProbe: what a spec's place holds, read without creating anything.
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite", sqliteDSN(other))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	store := filepath.Join(dir, "store.db")
	closeNow(t, &Options{Spec: Spec{Scheme: "sqlite", Target: store}})
	badgerDir := filepath.Join(dir, "badger")
	closeNow(t, &Options{Dir: badgerDir})
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	file("full/notes.txt", "x")
	for _, tc := range []struct {
		spec Spec
		want Presence
	}{
		{Spec{Scheme: "memory"}, Present},
		{Spec{Scheme: "badger", Target: filepath.Join(dir, "none")}, Absent},
		{Spec{Scheme: "badger", Target: badgerDir}, Present},
		{Spec{Scheme: "badger", Target: full}, Foreign},
		{Spec{Scheme: "sqlite", Target: filepath.Join(dir, "none.db")}, Absent},
		{Spec{Scheme: "sqlite", Target: file("empty.db", "")}, Absent},
		{Spec{Scheme: "sqlite", Target: store}, Present},
		{Spec{Scheme: "sqlite", Target: other}, Foreign},
		{Spec{Scheme: "sqlite", Target: file("notes.txt", "not a database")}, Foreign},
		{Spec{Scheme: "sqlite", Target: full}, Foreign},
	} {
		got, err := Probe(context.Background(), &Options{Spec: tc.spec})
		if err != nil || got != tc.want {
			t.Errorf("Probe(%v) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Probe created the file it probed: %v", err)
	}
	for _, p := range []string{store, store + "-wal", store + "-lock", other} {
		if !IsStore(p) {
			t.Errorf("IsStore(%s) = false: a store's files are a store's", p)
		}
	}
	if IsStore(filepath.Join(dir, "notes.txt")) {
		t.Error("IsStore(notes.txt) = true")
	}
}

// closeNow opens the store o names and closes it (it exists afterwards).
func closeNow(t *testing.T, o *Options) {
	t.Helper()
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRegisterTwicePanics: a scheme registered twice is a programmer
// error, as in sql.Register.
func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering sqlite again did not panic")
		}
	}()
	register(&driver{scheme: schemeSQLite})
}
