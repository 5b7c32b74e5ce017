package store

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
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

func TestSearch(t *testing.T) { eachBackend(t, testSearch) }

func testSearch(t *testing.T, be backend) {
	for _, indexed := range []bool{true, false} {
		t.Run(fmt.Sprint("indexed=", indexed), func(t *testing.T) {
			db := be.open(t)
			if !indexed {
				// Stop the indexer: every search must come from the tail scan.
				lockIndexer(db)
				defer unlockIndexer(db)
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

func TestSearchErrors(t *testing.T) { eachBackend(t, testSearchErrors) }

func testSearchErrors(t *testing.T, be backend) {
	db := be.open(t)
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
		{"a", "x", SearchOptions{Roles: []Role{9}}, ErrInvalid},
		{"a", "x", SearchOptions{Window: -1}, ErrInvalid},
		{"a", "x", SearchOptions{Window: maxWindow + 1}, ErrInvalid},
		{"a", "x", SearchOptions{MaxBytes: -1}, ErrInvalid},
		{"a", "x", SearchOptions{Session: "\xff"}, ErrInvalid},
		{"a", "x", SearchOptions{Since: time.Unix(10, 0), Until: time.Unix(10, 0)}, ErrInvalid},
	} {
		if _, _, err := db.Search(tc.conv, tc.q, tc.o); !errors.Is(err, tc.want) {
			t.Errorf("Search(%q, %q, %+v) = %v, want %v", tc.conv, tc.q, tc.o, err, tc.want)
		}
	}
}

// TestQueryBounds: every backend accepts a query up to MaxQueryBytes and
// MaxQueryTerms distinct terms (stop words and repeats not counted) and
// refuses a longer one as ErrInvalid naming the query, before reading
// anything; PostgreSQL once failed such a query with storage errors
// ("target lists can have at most 1664 entries", "stack depth limit
// exceeded") where badger answered.
func TestQueryBounds(t *testing.T) { eachBackend(t, testQueryBounds) }

func testQueryBounds(t *testing.T, be backend) {
	db := be.open(t)
	mustCreate(t, db, "a")
	mustAppend(t, db, "a", user("w1 w2 w3 alpha"))
	words := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprint("w", i+1)
		}
		return strings.Join(ws, " ")
	}
	for _, tc := range []struct {
		name string
		q    string
		o    SearchOptions
		ok   bool
	}{
		{"MaxQueryTerms terms", words(MaxQueryTerms), SearchOptions{}, true},
		{"one term more", words(MaxQueryTerms + 1), SearchOptions{}, false},
		{"2,000 terms", words(2000), SearchOptions{}, false},
		{"stop words and repeats", strings.Repeat("the w1 ", 500) + "alpha", SearchOptions{}, true},
		{"MaxQueryBytes bytes", strings.Repeat("w", MaxQueryBytes-5) + " w1 w", SearchOptions{}, true},
		{"one byte more", strings.Repeat("w", MaxQueryBytes-4) + " w1 w", SearchOptions{}, false},
		{"exact, one byte more", strings.Repeat("w", MaxQueryBytes+1), SearchOptions{Exact: true}, false},
		{"exact, many words", words(2000)[:MaxQueryBytes], SearchOptions{Exact: true}, true},
	} {
		hits, _, err := db.Search("a", tc.q, tc.o)
		var ve *ValidationError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v, want hits", tc.name, err)
		case tc.ok && !tc.o.Exact && len(hits) != 1:
			t.Errorf("%s: %d hits, want the one message", tc.name, len(hits))
		case !tc.ok && (!errors.As(err, &ve) || ve.Field != "query"):
			t.Errorf("%s: %v, want ErrInvalid naming the query", tc.name, err)
		}
	}
}

func TestReadYourWrites(t *testing.T) { eachBackend(t, testReadYourWrites) }

func testReadYourWrites(t *testing.T, be backend) {
	db := be.open(t)
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

func TestTailScoresComparable(t *testing.T) { eachBackend(t, testTailScoresComparable) }

func testTailScoresComparable(t *testing.T, be backend) {
	// The same documents score about the same from the index and from the
	// tail scan, so merged rankings are sensible.
	db := be.open(t)
	fillSearch(t, db)
	db.WaitIndexed(10 * time.Second)
	indexed, _, _ := db.Search("", "badger text", SearchOptions{})
	lockIndexer(db)
	mustCreate(t, db, "c")
	mustAppend(t, db, "c", assistant("bleve indexes badger badger badger text"))
	hits, _, _ := db.Search("", "badger text", SearchOptions{})
	unlockIndexer(db)
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

func placeSet(hits []Hit) string { return sortedSeqs(hits) }

// TestFilters checks role, session and date range filters, in the index
// and in the unindexed tail, ranked and exact.
func TestFilters(t *testing.T) { eachBackend(t, testFilters) }

func testFilters(t *testing.T, be backend) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, indexed := range []bool{true, false} {
		db := be.open(t)
		if !indexed {
			lockIndexer(db)
		}
		mustCreate(t, db, "a")
		mustCreate(t, db, "b")
		for _, m := range []struct {
			conv string
			role Role
			at   string
			sess string
		}{
			{"a", RoleUser, "2023-01-31T23:00:00Z", "s1"},
			{"a", RoleAssistant, "2023-02-01T00:30:00Z", "s1"},
			{"a", RoleUser, "2023-02-15T12:00:00Z", "s2"},
			{"a", RoleTool, "2023-03-01T00:00:00Z", "s2"},
			{"a", RoleUser, "", ""}, // created_at: 2026
			{"b", RoleUser, "2023-02-10T08:00:00Z", "s1"},
		} {
			var o AppendOptions
			if m.at != "" {
				o.Time = at(m.at)
			}
			o.Session = m.sess
			msg := Message{Role: m.role, Content: TextContent("apple " + m.conv)}
			if m.role == RoleTool {
				msg.ToolCallID = "call"
			}
			if _, err := db.Append(m.conv, msg, o); err != nil {
				t.Fatal(err)
			}
		}
		if indexed {
			if err := db.WaitIndexed(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			conv string
			o    SearchOptions
			want string
		}{
			{"", SearchOptions{}, "[a/1 a/2 a/3 a/4 a/5 b/1]"},
			{"", SearchOptions{Roles: []Role{RoleUser}}, "[a/1 a/3 a/5 b/1]"},
			{"a", SearchOptions{Roles: []Role{RoleUser, RoleTool}}, "[a/1 a/3 a/4 a/5]"},
			{"", SearchOptions{Roles: []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool}}, "[a/1 a/2 a/3 a/4 a/5 b/1]"},
			{"", SearchOptions{Session: "s1"}, "[a/1 a/2 b/1]"},
			{"a", SearchOptions{Session: "s1"}, "[a/1 a/2]"},
			{"", SearchOptions{Session: "nope"}, "[]"},
			{"", SearchOptions{Since: at("2023-02-01T00:00:00Z"), Until: at("2023-03-01T00:00:00Z")}, "[a/2 a/3 b/1]"},
			{"", SearchOptions{Since: at("2023-02-15T00:00:00Z")}, "[a/3 a/4 a/5]"},
			{"", SearchOptions{Until: at("2023-02-01T00:00:00Z")}, "[a/1]"},
			{"", SearchOptions{Since: at("2023-02-01T00:31:00Z"), Until: at("2023-02-15T11:00:00Z")}, "[b/1]"},
			{"a", SearchOptions{Roles: []Role{RoleUser}, Session: "s2"}, "[a/3]"},
			{"", SearchOptions{Exact: true, Roles: []Role{RoleTool}}, "[a/4]"},
			{"", SearchOptions{Exact: true, Session: "s1", Since: at("2023-02-01T00:00:00Z")}, "[a/2 b/1]"},
		} {
			for _, noContext := range []bool{false, true} {
				tc.o.NoContext = noContext
				hits, _, err := db.Search(tc.conv, "apple", tc.o)
				if err != nil {
					t.Fatal(err)
				}
				if got := placeSet(hits); got != tc.want {
					t.Errorf("indexed %v: Search(%q, %+v) = %s, want %s", indexed, tc.conv, tc.o, got, tc.want)
				}
			}
		}
		if !indexed {
			unlockIndexer(db)
		}
	}
}

// TestQualifiers: naming a speaker or a month lifts the messages it
// describes, and never makes a message match by itself.
func TestQualifiers(t *testing.T) { eachBackend(t, testQualifiers) }

func testQualifiers(t *testing.T, be backend) {
	db := be.open(t)
	mustCreate(t, db, "a")
	jan := time.Date(2023, 1, 10, 9, 0, 0, 0, time.UTC)
	mar := time.Date(2023, 3, 10, 9, 0, 0, 0, time.UTC)
	for _, m := range []struct {
		name string
		at   time.Time
	}{{"Ann", jan}, {"Bob", mar}, {"Ann", mar}} {
		msg := Message{Role: RoleUser, Name: m.name, Content: TextContent("we adopted a puppy last week")}
		if _, err := db.Append("a", msg, AppendOptions{Time: m.at}); err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(t, db, "a", Message{Role: RoleUser, Name: "Bob", Content: TextContent("nothing to see")})
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, want string }{
		{"puppy", "[a/1 a/2 a/3]"},
		{"What puppy did Bob adopt?", "[a/2 a/1 a/3]"},
		{"puppy January", "[a/1 a/2 a/3]"},
		{"Ann's puppy in March 2023", "[a/3 a/1 a/2]"},
		{"Bob", "[]"},
		{"March 2023", "[]"},
	} {
		hits, _, err := db.Search("a", tc.q, SearchOptions{NoContext: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := searchSeqs(hits); got != tc.want {
			t.Errorf("Search(%q) = %s, want %s", tc.q, got, tc.want)
		}
	}
}

// TestContextLifting: the reply to the question that matches best moves
// up; the best two hits keep their ranks; the hits are the same messages.
func TestContextLifting(t *testing.T) { eachBackend(t, testContextLifting) }

func testContextLifting(t *testing.T, be backend) {
	db := be.open(t)
	mustCreate(t, db, "a")
	appendIn := func(session string, m Message) {
		if _, err := db.Append("a", m, AppendOptions{Session: session}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 6; i++ {
		appendIn(fmt.Sprint("filler", i), user(fmt.Sprintf("puppy %d, puppy barking", i)))
	}
	appendIn("talk", user("Did you choose a name for your puppy? What name?"))      // 7
	appendIn("talk", assistant("Yes! We call the puppy Biscuit, after his colour")) // 8
	if err := db.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	plain, _, _ := db.Search("a", "puppy name", SearchOptions{NoContext: true})
	lifted, _, _ := db.Search("a", "puppy name", SearchOptions{})
	rank := func(hits []Hit, seq int64) int {
		for i, h := range hits {
			if h.Seq == seq {
				return i
			}
		}
		return -1
	}
	if placeSet(plain) != placeSet(lifted) || len(plain) != 8 {
		t.Fatalf("hits differ: plain %s, lifted %s", placeSet(plain), placeSet(lifted))
	}
	if plain[0].Seq != 7 || lifted[0].Seq != 7 || lifted[1].Seq != plain[1].Seq {
		t.Errorf("the best two moved: plain %s, lifted %s", searchSeqs(plain), searchSeqs(lifted))
	}
	if r := rank(lifted, 8); r >= rank(plain, 8) || r != 2 {
		t.Errorf("the reply ranks %d with context, %d without: %s", r, rank(plain, 8), searchSeqs(lifted))
	}
	if lifted[2].Lift <= 0 || lifted[0].Lift != 0 {
		t.Errorf("lifts: %v, %v", lifted[0].Lift, lifted[2].Lift)
	}
}

// TestWindows: the messages around each hit, within its session, nearest
// first within the byte budget, each message once.
func TestWindows(t *testing.T) { eachBackend(t, testWindows) }

func testWindows(t *testing.T, be backend) {
	db := be.open(t)
	mustCreate(t, db, "a")
	for i := 1; i <= 10; i++ {
		session := "s1"
		if i > 6 {
			session = "s2"
		}
		text := fmt.Sprintf("turn%02d", i) // 6 bytes each
		if i == 4 || i == 6 {
			text += " needle"
		}
		if _, err := db.Append("a", user(text), AppendOptions{Session: session}); err != nil {
			t.Fatal(err)
		}
	}
	window := func(h Hit) []int64 {
		var out []int64
		for _, r := range h.Window {
			out = append(out, r.Seq)
		}
		return out
	}
	for _, tc := range []struct {
		o         SearchOptions
		want      string
		truncated bool
	}{
		{SearchOptions{Window: 2}, "4:[2 3 5] 6:[]", false},
		{SearchOptions{Window: 1, NoContext: true}, "4:[3 5] 6:[]", false},
		{SearchOptions{Window: 3, MaxResults: 1}, "4:[1 2 3 5 6]", false},
		{SearchOptions{Window: 2, MaxBytes: 13 + 13 + 12}, "4:[3 5] 6:[]", true},
		{SearchOptions{Window: 2, MaxBytes: 13 + 13 + 18}, "4:[2 3 5] 6:[]", false},
		{SearchOptions{Window: 2, MaxBytes: 1}, "4:[] 6:[]", true},
	} {
		res, err := db.Find("a", "needle", tc.o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, fmt.Sprintf("%d:%v", h.Seq, window(h)))
		}
		if s := strings.Join(got, " "); s != tc.want || res.Truncated != tc.truncated {
			t.Errorf("Find(%+v) = %s truncated %v, want %s truncated %v", tc.o, s, res.Truncated, tc.want, tc.truncated)
		}
	}
}

// TestRankedSearchReadsAMegabytePerMessage: ranked search indexes the
// first MiB of a message's text (a pasted log would otherwise cost
// hundreds of megabytes to analyze), and says so in the hit (Partial);
// exact search reads it all.
func TestRankedSearchReadsAMegabytePerMessage(t *testing.T) {
	db := openDir(t, t.TempDir())
	defer db.Close()
	mustCreate(t, db, "c")
	text := "early " + strings.Repeat("filler ", maxIndexedText/7) + " late"
	if _, err := db.Append("c", Message{Role: RoleUser, Content: TextContent(text)}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append("c", Message{Role: RoleUser, Content: TextContent("early, and short")}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// A memory store says it cannot keep the message, and keeps nothing.
	mem := openMem(t)
	mustCreate(t, mem, "c")
	var ve *ValidationError
	if _, err := mem.Append("c", Message{Role: RoleUser, Content: TextContent(text)}, AppendOptions{}); !errors.As(err, &ve) || ve.Field != "content" {
		t.Fatalf("memory store append of %d bytes: %v", len(text), err)
	}
	if st, _ := mem.Stats("c"); st.Messages != 0 {
		t.Fatalf("memory store kept %d messages", st.Messages)
	}
	for _, tc := range []struct {
		q     string
		exact bool
		want  int
	}{{"early", false, 2}, {"late", false, 0}, {"late", true, 1}} {
		hits, _, err := db.Search("c", tc.q, SearchOptions{Exact: tc.exact})
		if err != nil || len(hits) != tc.want {
			t.Errorf("search %q exact=%v: %d hits, %v; want %d", tc.q, tc.exact, len(hits), err, tc.want)
		}
		for _, h := range hits {
			if want := !tc.exact && h.Seq == 1; h.Partial != want {
				t.Errorf("search %q exact=%v: message %d Partial = %v, want %v", tc.q, tc.exact, h.Seq, h.Partial, want)
			}
		}
	}
}
