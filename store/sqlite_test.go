package store

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSQLiteSegmentsMerge: an index written one message at a time (a
// chat's appends) is merged as it grows — F segments of one tier make one
// of the next, the newest ones only, so message order holds — and ranks
// what it holds as badger does.
func TestSQLiteSegmentsMerge(t *testing.T) {
	spec := sqliteSpec(t)
	db := openWith(t, &Options{Spec: spec})
	mem := openWith(t, &Options{InMemory: true})
	words := []string{"alpha", "beta", "gamma", "delta", "omega"}
	const n = 200
	for _, d := range []*DB{db, mem} {
		mustCreate(t, d, "c")
		mustCreate(t, d, "d")
	}
	for i := range n {
		text := fmt.Sprintf("%s %s message %d", words[i%5], words[(i/5)%5], i)
		for _, d := range []*DB{db, mem} {
			mustAppend(t, d, []string{"c", "d"}[i%2], user(text))
			if err := d.WaitIndexed(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := db.search.(*sqliteSearch)
	var segs, docs int
	if err := s.kv.db.QueryRow(`SELECT count(*), sum(docs) FROM rlmpl_seg`).Scan(&segs, &docs); err != nil {
		t.Fatal(err)
	}
	// 200 = 3·64 + 1·8: three segments of 64 messages and one of 8.
	if segs != 4 || docs != n {
		t.Errorf("after %d appends indexed one by one: %d segments holding %d messages, want 4 holding %d", n, segs, docs, n)
	}
	for _, q := range []string{"alpha beta", "omega", "message 17", "gamma delta alpha"} {
		for _, conv := range []string{"", "c", "d"} {
			o := SearchOptions{MaxResults: 50}
			want, _, err := mem.Search(conv, q, o)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := db.Search(conv, q, o)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRanking(scoredHits(got), scoredHits(want)) {
				t.Errorf("Search(%q, %q):\n got %v\nwant %v", conv, q, scoredHits(got), scoredHits(want))
			}
		}
	}
}

// TestSQLiteSearchLanguage: the first process to open an SQLite store
// fixes its index's language; opening it with another is refused (the
// processes sharing it would rebuild it in turn).
func TestSQLiteSearchLanguage(t *testing.T) {
	spec := sqliteSpec(t)
	openWith(t, &Options{Spec: spec, Language: LanguageNone})
	if _, err := Open(&Options{Spec: spec, Language: LanguageEnglish}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open with another language = %v, want ErrInvalid", err)
	}
	db := openWith(t, &Options{Spec: spec, Language: LanguageNone})
	db.Close()
}

// TestSQLitePendingIndexedByTheNextOpen: messages appended by a process
// that ended before indexing them (a kill -9) are searchable at once (the
// scan of the unindexed tail) and indexed by the next process to open the
// store.
func TestSQLitePendingIndexedByTheNextOpen(t *testing.T) {
	spec := sqliteSpec(t)
	db := openWith(t, &Options{Spec: spec})
	lockIndexer(db)
	mustCreate(t, db, "c")
	mustAppend(t, db, "c", user("the staging port is 8443"))
	other := openWith(t, &Options{Spec: spec})
	if hits, _, err := other.Search("", "staging", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("search of an unindexed message from another store: %v, %v", hits, err)
	}
	if err := other.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	var pending int
	if err := other.search.(*sqliteSearch).kv.db.QueryRow(`SELECT count(*) FROM rlmpl_pending`).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("pending after the other store indexed: %d, %v", pending, err)
	}
	unlockIndexer(db)
	if hits, _, err := db.Search("c", "staging", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("search after the other store indexed: %v, %v", hits, err)
	}
}
