package store

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

func searchSeqs(hits []Hit) string {
	var s []string
	for _, h := range hits {
		s = append(s, fmt.Sprintf("%s/%d", h.Conversation, h.Seq))
	}
	return fmt.Sprint(s)
}

func sortedSeqs(hits []Hit) string {
	h := append([]Hit(nil), hits...)
	slices.SortFunc(h, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(a.Conversation, b.Conversation), cmp.Compare(a.Seq, b.Seq))
	})
	return searchSeqs(h)
}

func fillSearch(t *testing.T, db *DB) {
	t.Helper()
	mustCreate(t, db, "a")
	mustCreate(t, db, "b")
	for _, m := range []Message{
		user("the badger stores the log"),                    // a/1
		assistant("bleve indexes badger badger badger text"), // a/2
		user("nothing relevant here"),                        // a/3
		{Role: RoleUser, Content: PartsContent(TextPart("a parts message about zebras"), ImagePart("http://badger.example/x.png", ""))}, // a/4
	} {
		mustAppend(t, db, "a", m)
	}
	mustAppend(t, db, "b", user("one badger in b"))
	mustAppend(t, db, "b", user("user assistant role names"))
}

func TestSearch(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		t.Run(fmt.Sprint("indexed=", indexed), func(t *testing.T) {
			db := openMem(t)
			if !indexed {
				// Stop the indexer: every search must come from the tail scan.
				db.ix.work.Lock()
				defer db.ix.work.Unlock()
			}
			fillSearch(t, db)
			if indexed {
				if err := db.WaitIndexed(10 * time.Second); err != nil {
					t.Fatal(err)
				}
			}
			hits, next, err := db.Search("", "badger", SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// a/2 mentions badger three times; a/4 only in an image URL (not content).
			if got := searchSeqs(hits); len(hits) != 3 || hits[0].Seq != 2 || hits[0].Conversation != "a" || next != 0 {
				t.Errorf("Search(badger) = %s next %d", got, next)
			}
			for _, h := range hits {
				if h.Score <= 0 {
					t.Errorf("hit %s/%d score %v", h.Conversation, h.Seq, h.Score)
				}
			}
			var unscoped float64
			for _, h := range hits {
				if h.Conversation == "b" {
					unscoped = h.Score
				}
			}
			hits, _, _ = db.Search("b", "badger", SearchOptions{})
			if got := searchSeqs(hits); got != "[b/1]" {
				t.Errorf("Search(b, badger) = %s", got)
			} else if math.Abs(hits[0].Score-unscoped) > 1e-9 {
				t.Errorf("scoped score %v, unscoped %v", hits[0].Score, unscoped)
			}
			// Content only: role names and seq numbers are not content.
			if hits, _, _ := db.Search("a", "user", SearchOptions{}); len(hits) != 0 {
				t.Errorf("Search(a, user) = %s, want none", searchSeqs(hits))
			}
			if hits, _, _ := db.Search("", "user", SearchOptions{}); searchSeqs(hits) != "[b/2]" {
				t.Errorf("Search(user) = %s, want [b/2]", searchSeqs(hits))
			}
			if hits, _, _ := db.Search("a", "zebras", SearchOptions{}); searchSeqs(hits) != "[a/4]" {
				t.Errorf("Search(zebras) = %s", searchSeqs(hits))
			}
			if hits, _, _ := db.Search("", "the", SearchOptions{}); len(hits) != 0 {
				t.Errorf("stop word search = %s", searchSeqs(hits))
			}
			// Paging.
			p1, next, _ := db.Search("", "badger", SearchOptions{MaxResults: 2})
			p2, next2, _ := db.Search("", "badger", SearchOptions{MaxResults: 2, Offset: next})
			if len(p1) != 2 || next != 2 || len(p2) != 1 || next2 != 0 || p2[0].Seq == p1[0].Seq && p2[0].Conversation == p1[0].Conversation {
				t.Errorf("paging: %s next %d, %s next %d", searchSeqs(p1), next, searchSeqs(p2), next2)
			}
			// Exact mode.
			hits, _, _ = db.Search("", "BADGER", SearchOptions{Exact: true})
			if got := searchSeqs(hits); got != "[a/1 a/2 b/1]" {
				t.Errorf("exact = %s", got)
			}
			if hits, _, _ := db.Search("", "BADGER", SearchOptions{Exact: true, CaseSensitive: true}); len(hits) != 0 {
				t.Errorf("exact case-sensitive = %s", searchSeqs(hits))
			}
			if hits, _, _ := db.Search("", "[1] user:", SearchOptions{Exact: true}); len(hits) != 0 {
				t.Errorf("exact rendering match = %s", searchSeqs(hits))
			}
			hits, next, _ = db.Search("a", "badger", SearchOptions{Exact: true, MaxResults: 1, Offset: 1})
			if searchSeqs(hits) != "[a/2]" || next != 0 {
				t.Errorf("exact page = %s next %d", searchSeqs(hits), next)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	db := openMem(t)
	mustCreate(t, db, "a")
	for _, tc := range []struct {
		conv, q string
		o       SearchOptions
		want    error
	}{
		{"a", " ", SearchOptions{}, ErrInvalid},
		{"a", "x", SearchOptions{MaxResults: -1}, ErrInvalid},
		{"a", "x", SearchOptions{Offset: -1}, ErrInvalid},
		{"nope", "x", SearchOptions{}, ErrNotFound},
	} {
		if _, _, err := db.Search(tc.conv, tc.q, tc.o); !errors.Is(err, tc.want) {
			t.Errorf("Search(%q, %q, %+v) = %v, want %v", tc.conv, tc.q, tc.o, err, tc.want)
		}
	}
}

func TestReadYourWrites(t *testing.T) {
	db := openMem(t)
	mustCreate(t, db, "a")
	for i := 0; i < 50; i++ {
		mustAppend(t, db, "a", user(fmt.Sprint("filler number ", i)))
		// Searching right after each append must see it, indexed or not.
		word := fmt.Sprintf("marker%d", i)
		mustAppend(t, db, "a", user("the "+word+" is here"))
		hits, _, err := db.Search("a", word, SearchOptions{})
		if err != nil || len(hits) != 1 || hits[0].Seq != int64(2*i+2) {
			t.Fatalf("Search(%s) right after append = %s, %v", word, searchSeqs(hits), err)
		}
		if hits, _, _ := db.Search("", word, SearchOptions{}); len(hits) != 1 {
			t.Fatalf("Search(all, %s) = %s", word, searchSeqs(hits))
		}
	}
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	hits, _, _ := db.Search("a", "filler", SearchOptions{MaxResults: 100})
	if len(hits) != 50 {
		t.Errorf("Search(filler) = %d hits, want 50", len(hits))
	}
}

func TestTailScoresComparable(t *testing.T) {
	// The same documents score about the same from the index and from the
	// tail scan, so merged rankings are sensible.
	db := openMem(t)
	fillSearch(t, db)
	db.WaitIndexed(10 * time.Second)
	indexed, _, _ := db.Search("", "badger text", SearchOptions{})
	db.ix.work.Lock()
	mustCreate(t, db, "c")
	mustAppend(t, db, "c", assistant("bleve indexes badger badger badger text"))
	hits, _, _ := db.Search("", "badger text", SearchOptions{})
	db.ix.work.Unlock()
	if len(hits) != len(indexed)+1 || hits[0].Conversation != "a" && hits[0].Conversation != "c" || hits[1].Seq != 2 && hits[1].Seq != 1 {
		t.Errorf("merged ranking = %s (indexed alone %s)", searchSeqs(hits), searchSeqs(indexed))
	}
	var a2, c1 float64
	for _, h := range hits {
		if h.Conversation == "a" && h.Seq == 2 {
			a2 = h.Score
		}
		if h.Conversation == "c" {
			c1 = h.Score
		}
	}
	if c1 < a2*0.5 || c1 > a2*2 {
		t.Errorf("tail score %v vs index score %v for the same text", c1, a2)
	}
}

func TestReindexAndReopenIndex(t *testing.T) {
	dir := t.TempDir()
	db := openDir(t, dir)
	fillSearch(t, db)
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	before, _, _ := db.Search("", "badger", SearchOptions{})
	if err := db.Reindex(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	after, _, _ := db.Search("", "badger", SearchOptions{})
	// Same hits; the order of near-equal BM25 scores may change with the
	// index's segment layout.
	if sortedSeqs(before) != sortedSeqs(after) || len(after) != 3 {
		t.Errorf("after Reindex %s, before %s", searchSeqs(after), searchSeqs(before))
	}
	mustAppend(t, db, "b", user("late badger"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDir(t, dir)
	defer db.Close()
	hits, _, err := db.Search("", "badger", SearchOptions{})
	if err != nil || len(hits) != 4 {
		t.Errorf("after reopen %s, %v", searchSeqs(hits), err)
	}
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if a, b := db.ix.dirtyLen(), 0; a != b {
		t.Errorf("pending after WaitIndexed = %d", a)
	}
}

func TestIndexRebuiltWhenMissing(t *testing.T) {
	dir := t.TempDir()
	db := openDir(t, dir)
	fillSearch(t, db)
	db.WaitIndexed(10 * time.Second)
	db.Close()
	if err := removeAll(dir + "/index"); err != nil {
		t.Fatal(err)
	}
	db = openDir(t, dir)
	defer db.Close()
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if hits, _, _ := db.Search("", "badger", SearchOptions{}); len(hits) != 3 {
		t.Errorf("after index loss %s", searchSeqs(hits))
	}
	if db.ix.dirtyLen() != 0 {
		t.Errorf("still pending")
	}
}
