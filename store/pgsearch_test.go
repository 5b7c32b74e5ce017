package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// searchFixture appends a small corpus to conversations a and b of db and
// returns the queries the tests below compare.
func searchFixture(t *testing.T, db *DB) []string {
	t.Helper()
	mustCreate(t, db, "a")
	mustCreate(t, db, "b")
	for i, s := range []string{
		"the staging port is 8443", "deploy the staging cluster on friday",
		"Caroline said the badger lives under the bridge", "it's a quoted \\ back'slash term",
		"production port stays 443", "badgers badger badgering",
	} {
		mustAppend(t, db, []string{"a", "b"}[i%2], Message{Role: RoleUser, Name: []string{"Caroline", "Mel"}[i%2], Content: TextContent(s)})
	}
	return []string{"staging port", "badger", "Caroline badger", "back'slash", "quoted \\"}
}

// rankings runs every query on db, in each conversation and in all.
func rankings(t *testing.T, db *DB, queries []string) map[string][]scoredHit {
	t.Helper()
	out := map[string][]scoredHit{}
	for _, conv := range []string{"a", "b", ""} {
		for _, q := range queries {
			hits, _, err := db.Search(conv, q, SearchOptions{})
			if err != nil {
				t.Fatalf("Search(%q, %q): %v", conv, q, err)
			}
			out[conv+"|"+q] = scoredHits(hits)
		}
	}
	return out
}

func sameRankings(t *testing.T, what string, got, want map[string][]scoredHit) {
	t.Helper()
	for k, w := range want {
		if !sameRanking(got[k], w) {
			t.Errorf("%s: %s\n got %v\nwant %v", what, k, got[k], w)
		}
	}
}

// TestPostgresSearchIsInTheDatabase: an append's search document commits
// with it, so the database itself holds one per message, and its
// rankings are those of badger's index for the same messages.
func TestPostgresSearchIsInTheDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := openWith(t, &Options{Postgres: &PostgresOptions{DSN: dsn}})
	queries := searchFixture(t, db)
	if got := pgtest.Scalar(t, dsn, "SELECT (SELECT count(*) FROM rlmpl_doc) || ' ' || (SELECT sum(docs) FROM rlmpl_doc_stats)"); got != "6 6" {
		t.Errorf("documents, documents counted = %q, want 6 6", got)
	}
	mem := openWith(t, &Options{InMemory: true})
	searchFixture(t, mem)
	if err := mem.WaitIndexed(10e9); err != nil {
		t.Fatal(err)
	}
	sameRankings(t, "postgres against memory", rankings(t, db, queries), rankings(t, mem, queries))
}

// TestPostgresMigrationFromVersion1: a database written by the binary of
// schema version 1 (the key-value table only) migrates to the search
// tables, and the first opens write the documents of the messages it
// held — once, whatever the number of processes opening it at once —
// after which it ranks as a store that always had them.
func TestPostgresMigrationFromVersion1(t *testing.T) {
	dsn := pgtest.DSN(t)
	o := Options{Postgres: &PostgresOptions{DSN: dsn}}
	db := openWith(t, &o)
	queries := searchFixture(t, db)
	want := rankings(t, db, queries)
	db.Close()
	// What version 1 had: no search tables, no record of migration 2.
	pgtest.Exec(t, dsn, "DROP TABLE rlmpl_doc, rlmpl_doc_stats, rlmpl_df, rlmpl_search")
	pgtest.Exec(t, dsn, "DELETE FROM rlmpl_schema_version WHERE version >= 2")

	var wg sync.WaitGroup
	dbs := make([]*DB, 4)
	errs := make([]error, len(dbs))
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = Open(&Options{Postgres: o.Postgres})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, d := range dbs {
		defer d.Close()
	}
	ms, _ := schemaMigrations()
	if got := pgtest.Scalar(t, dsn, "SELECT max(version) FROM rlmpl_schema_version"); got != fmt.Sprint(len(ms)) {
		t.Errorf("schema version after migrating = %s, want %d", got, len(ms))
	}
	if got := pgtest.Scalar(t, dsn, "SELECT count(*) || ' ' || (SELECT sum(docs) FROM rlmpl_doc_stats) || ' ' || (SELECT complete FROM rlmpl_search) FROM rlmpl_doc"); got != "6 6 true" {
		t.Errorf("documents, counted, complete = %q, want 6 6 true", got)
	}
	for i, d := range dbs {
		sameRankings(t, fmt.Sprintf("store %d after migrating", i), rankings(t, d, queries), want)
	}
	if err := dbs[0].Reindex(10e9); err != nil {
		t.Fatal(err)
	}
	sameRankings(t, "after Reindex", rankings(t, dbs[1], queries), want)
}

// TestPostgresSearchLanguage: the processes sharing a store share its
// analyzer; one opening it with another language is refused, naming both,
// rather than writing documents the others cannot search.
func TestPostgresSearchLanguage(t *testing.T) {
	dsn := pgtest.DSN(t)
	openWith(t, &Options{Postgres: &PostgresOptions{DSN: dsn}}).Close()
	_, err := Open(&Options{Postgres: &PostgresOptions{DSN: dsn}, Language: LanguageNone})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"en"`) || !strings.Contains(err.Error(), `"none"`) {
		t.Fatalf("Open with another language = %v, want ErrInvalid naming both", err)
	}
}

// TestPostgresLexemeLimits: terms PostgreSQL cannot hold as lexemes (over
// 2,046 bytes) are left out of its documents and queries, without failing
// the append or the search; the rest of the message is searchable.
func TestPostgresLexemeLimits(t *testing.T) {
	db := openWith(t, &Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}})
	mustCreate(t, db, "c")
	long := strings.Repeat("x", 3000)
	mustAppend(t, db, "c", user("findable "+long))
	hits, _, err := db.Search("c", "findable", SearchOptions{})
	if err != nil || len(hits) != 1 {
		t.Errorf("Search(findable) = %v, %v", hits, err)
	}
	if hits, _, err := db.Search("c", long, SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("Search(3000-byte term) = %v, %v; want no hits, no error", hits, err)
	}
}
