package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// TestStoreStatusAndMigrate: status on an empty schema reports version 0
// with every migration pending and creates nothing; migrate applies them
// and says which; a database migrated by a newer binary makes status,
// migrate and every other command fail with a message that says to
// upgrade.
func TestStoreStatusAndMigrate(t *testing.T) {
	url := pgtest.DSN(t)
	out, errs, code := rlmpl(t, "store", "status", "--json", "--store", url)
	var st schemaJSON
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Version != 0 || st.Latest < 2 || len(st.Pending) != st.Latest {
		t.Fatalf("status --json of an empty schema: %d %v\n%s%s", code, err, out, errs)
	}
	latest := st.Latest
	out, errs, code = rlmpl(t, "store", "status", "--store", url)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("version: 0 (this binary: %d)", latest)) || !strings.Contains(out, "pending: 0001_kv.sql, 0002_search.sql") {
		t.Fatalf("status of an empty schema: %d\n%s%s", code, out, errs)
	}
	if got := pgtest.Scalar(t, url, "SELECT coalesce(to_regclass('rlmpl_schema_version')::text, 'none')"); got != "none" {
		t.Errorf("status created %s", got)
	}
	out, errs, code = rlmpl(t, "store", "migrate", "--store", url)
	if code != 0 || !strings.HasPrefix(out, "applied 0001_kv.sql\napplied 0002_search.sql\n") || !strings.Contains(out, fmt.Sprintf("version: %d (this binary: %d)", latest, latest)) || !strings.Contains(out, "pending: none") {
		t.Fatalf("migrate: %d\n%s%s", code, out, errs)
	}
	if out, _, code = rlmpl(t, "store", "migrate", "--store", url); code != 0 || strings.HasPrefix(out, "applied ") {
		t.Errorf("a second migrate: %d\n%s", code, out)
	}
	out, errs, code = rlmpl(t, "store", "status", "--json", "--store", url)
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Version != latest || st.Latest != latest || len(st.Applied) != latest || len(st.Pending) != 0 || st.Newer {
		t.Fatalf("status --json: %d %v\n%s%s", code, err, out, errs)
	}

	newer := latest + 1
	pgtest.Exec(t, url, fmt.Sprintf("INSERT INTO rlmpl_schema_version (version, name) VALUES (%d, 'from_the_future.sql')", newer))
	for _, cmd := range []string{"status", "migrate"} {
		out, errs, code = rlmpl(t, "store", cmd, "--store", url)
		if code != 1 || !strings.Contains(out, fmt.Sprintf("version: %d (this binary: %d)", newer, latest)) ||
			!strings.Contains(errs, fmt.Sprintf("database schema is newer than this binary: the database is at version %d, this binary knows versions up to %d; upgrade rlmpl", newer, latest)) {
			t.Errorf("store %s of a newer schema: %d\n%s%s", cmd, code, out, errs)
		}
	}
	if _, errs, code = rlmpl(t, "conv", "list", "--store", url); code != 1 || !strings.Contains(errs, "newer than this binary") {
		t.Errorf("conv list of a newer schema: %d %s", code, errs)
	}
}

// TestStoreCommandNeedsPostgres: a badger store has no schema versions;
// store status says so as a usage error.
func TestStoreCommandNeedsPostgres(t *testing.T) {
	_, errs, code := rlmpl(t, "store", "status", "--store", t.TempDir())
	if code != 2 || !strings.Contains(errs, "is a badger store") {
		t.Errorf("store status of a directory: %d %s", code, errs)
	}
	if _, errs, code = rlmpl(t, "store", "upgrade"); code != 2 || !strings.Contains(errs, "usage: rlmpl store status|migrate") {
		t.Errorf("store upgrade: %d %s", code, errs)
	}
}

// TestDefaultStore: without --store a command uses $RLMPL_STORE, else
// config.toml's store (beside providers.toml), else "default"; --store
// wins over both, the environment over the file, and an unknown key in
// the file is a configuration error.
func TestDefaultStore(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	state := t.TempDir()
	fromFile, fromEnv, fromFlag := filepath.Join(state, "file"), filepath.Join(state, "env"), filepath.Join(state, "flag")
	file := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(file, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	imported := func(args ...string) string {
		t.Helper()
		if _, errs, code := rlmpl(t, append([]string{"conv", "import", "--state", state}, args...)...); code != 0 {
			t.Fatalf("import %v: %d %s", args, code, errs)
		}
		var where []string
		for _, d := range []string{"default", "file", "env", "flag"} {
			if out, _, _ := rlmpl(t, "conv", "list", "--store", filepath.Join(state, d)); strings.Contains(out, args[len(args)-2]) {
				where = append(where, d)
			}
		}
		return strings.Join(where, ",")
	}
	if got := imported("c0", file); got != "default" {
		t.Errorf("no flag, variable or file: imported into %q, want default", got)
	}
	mkdir := filepath.Join(cfg, "rlmpl")
	if err := os.MkdirAll(mkdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mkdir, "config.toml"), []byte("store = "+strconvQuote(fromFile)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := imported("c1", file); got != "file" {
		t.Errorf("config.toml: imported into %q, want file", got)
	}
	t.Setenv("RLMPL_STORE", fromEnv)
	if got := imported("c2", file); got != "env" {
		t.Errorf("RLMPL_STORE and config.toml: imported into %q, want env", got)
	}
	if got := imported("--store", fromFlag, "c3", file); got != "flag" {
		t.Errorf("--store, RLMPL_STORE and config.toml: imported into %q, want flag", got)
	}
	t.Setenv("RLMPL_STORE", "")
	if err := os.WriteFile(filepath.Join(mkdir, "config.toml"), []byte("stor = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := rlmpl(t, "conv", "list", "--state", state); code != 2 || !strings.Contains(errs, `unknown key "stor"`) {
		t.Errorf("config.toml with a typo: %d %s", code, errs)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
