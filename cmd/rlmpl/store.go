package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/store"
)

const storeSynopsis = "store status|migrate [--store postgres://...] [--json]"

// schemaJSON is `rlmpl store status --json`.
type schemaJSON struct {
	Store   string        `json:"store"`
	Schema  string        `json:"schema"`
	Role    string        `json:"role"`
	Version int           `json:"version"`
	Latest  int           `json:"latest"`
	Applied []appliedJSON `json:"applied"`
	Pending []string      `json:"pending"`
	Newer   bool          `json:"newer"`
	Error   string        `json:"error,omitempty"`
}

type appliedJSON struct {
	Version   int    `json:"version"`
	Name      string `json:"name"`
	AppliedAt int64  `json:"applied_at_ms"`
}

// runStore implements `rlmpl store status|migrate`: the schema version of
// a PostgreSQL store beside this binary's migrations, and applying the
// pending ones (what opening the store does) ahead of a deploy.
func runStore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, ok := groupHelp(args, storeSynopsis, stdout, stderr); !ok {
		return code
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("store "+cmd, flag.ContinueOnError)
	name := storeFlag(fs)
	asJSON := fs.Bool("json", false, "status, migrate: one JSON object")
	pos, code, ok := parseCommand(fs, storeSynopsis, args, stdout, stderr)
	if !ok {
		return code
	}
	if (cmd != "status" && cmd != "migrate") || len(pos) != 0 {
		fmt.Fprintf(stderr, "usage: rlmpl %s\n", storeSynopsis)
		return 2
	}
	if code, ok := resolveStoreFlag(name, "store "+cmd, stderr); !ok {
		return code
	}
	resolved := *name
	spec, isURL := runtime.PostgresSpec(resolved)
	if !isURL {
		fmt.Fprintf(stderr, "rlmpl store %s: %q is a badger store, whose format needs no migration; name a postgres:// URL\n", cmd, store.RedactDSN(resolved))
		return 2
	}
	// "applied" lines name what migrate changed; a newer database is
	// reported below, with its status, by both commands.
	st, err := store.PostgresSchemaStatus(ctx, *spec.Postgres)
	if err == nil && cmd == "migrate" && !st.Newer() {
		pending := st.Pending
		if st, err = store.MigratePostgres(ctx, *spec.Postgres); err == nil && !*asJSON {
			for _, p := range pending {
				fmt.Fprintf(stdout, "applied %s\n", p)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl store %s: %v\n", cmd, err)
		return 1
	}
	where := spec.Postgres.String()
	if *asJSON {
		v := schemaJSON{Store: where, Schema: st.Schema, Role: st.Role, Version: st.Version, Latest: st.Latest, Pending: st.Pending,
			Applied: []appliedJSON{}, Newer: st.Newer()}
		if v.Pending == nil {
			v.Pending = []string{}
		}
		for _, a := range st.Applied {
			v.Applied = append(v.Applied, appliedJSON{a.Version, a.Name, a.AppliedAt.UnixMilli()})
		}
		if st.Newer() {
			v.Error = newerMessage(st)
		}
		if err := printJSON(stdout, v); err != nil {
			fmt.Fprintf(stderr, "rlmpl store %s: %v\n", cmd, err)
			return 1
		}
	} else {
		fmt.Fprintf(stdout, "store: %s, schema %s, role %s\n", where, st.Schema, st.Role)
		fmt.Fprintf(stdout, "version: %d (this binary: %d)\n", st.Version, st.Latest)
		for _, a := range st.Applied {
			fmt.Fprintf(stdout, "applied: %s at %s\n", a.Name, a.AppliedAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		if len(st.Pending) == 0 {
			fmt.Fprintln(stdout, "pending: none")
		} else {
			fmt.Fprintf(stdout, "pending: %s (rlmpl store migrate, or the first open, applies them)\n", strings.Join(st.Pending, ", "))
		}
	}
	if st.Newer() {
		fmt.Fprintf(stderr, "rlmpl store %s: %s\n", cmd, newerMessage(st))
		return 1
	}
	return 0
}

// newerMessage says what to do about a database newer than the binary.
func newerMessage(st store.SchemaStatus) string {
	return fmt.Sprintf("%v: the database is at version %d, this binary knows versions up to %d; upgrade rlmpl (it refuses to open the store)",
		store.ErrSchemaNewer, st.Version, st.Latest)
}
