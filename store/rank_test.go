package store

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/store/pgtest"
)

// rankCorpus appends a small corpus with every scored and qualifier field
// to conversations "a" and "b"; between (if not nil) runs after a's part.
func rankCorpus(t testing.TB, db *DB, between func()) {
	t.Helper()
	mustCreate(t, db, "a")
	mustCreate(t, db, "b")
	march := time.Date(2023, 3, 14, 10, 0, 0, 0, time.UTC)
	may := time.Date(2023, 5, 2, 10, 0, 0, 0, time.UTC)
	for _, m := range []struct {
		conv string
		msg  Message
		opts AppendOptions
	}{
		{"a", Message{Role: RoleUser, Name: "Caroline", Content: TextContent("I went to a support group yesterday and the stories were so powerful")}, AppendOptions{Time: march, Session: "s1"}},
		{"a", Message{Role: RoleAssistant, Name: "Melanie", Content: TextContent("Wow Caroline, what did the group talk about?")}, AppendOptions{Time: march, Session: "s1"}},
		{"a", Message{Role: RoleUser, Name: "Caroline", Content: TextContent("Mostly about adoption, I've been researching adoption agencies")}, AppendOptions{Time: march, Session: "s1"}},
		{"a", Message{Role: RoleAssistant, Name: "Melanie", Content: PartsContent(TextPart("I painted this last weekend"), CaptionedImagePart("http://x/sunset.png", "", "a painting of a sunset over a lake"))}, AppendOptions{Time: may, Session: "s2"}},
		{"a", Message{Role: RoleUser, Name: "Caroline", Content: TextContent("Caroline's favourite painting is the lake one")}, AppendOptions{Time: may, Session: "s2"}},
		{"a", Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup_agency", Arguments: `{"city":"Boston","kind":"adoption"}`}}}, AppendOptions{Time: may, Session: "s2"}},
		{"a", Message{Role: RoleTool, ToolCallID: "c1", Content: TextContent("Three adoption agencies in Boston accept single parents")}, AppendOptions{Time: may, Session: "s2"}},
		{"", Message{}, AppendOptions{}},
		{"b", user("a group of designers designed the new badge design"), AppendOptions{}},
		{"b", assistant("the designs are ready; the painter paints the sunset"), AppendOptions{}},
		{"b", user("support support support group group"), AppendOptions{}},
	} {
		if m.conv == "" {
			if between != nil {
				between()
			}
			continue
		}
		if _, err := db.Append(m.conv, m.msg, m.opts); err != nil {
			t.Fatal(err)
		}
	}
}

var rankQueries = []string{
	"support group", "adoption agencies", "What did Caroline research?", "painting sunset",
	"design", "lookup agency Boston", "What did Melanie paint in May 2023?", "Caroline's painting", "group",
}

type scoredHit struct {
	place string
	score float64
}

func scoredHits(hits []Hit) []scoredHit {
	out := make([]scoredHit, len(hits))
	for i, h := range hits {
		out[i] = scoredHit{fmt.Sprintf("%s/%d", h.Conversation, h.Seq), h.Score}
	}
	return out
}

func sameRanking(a, b []scoredHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].place != b[i].place || math.Abs(a[i].score-b[i].score) > 1e-9*math.Max(1, a[i].score) {
			return false
		}
	}
	return true
}

// TestScoringSameEverywhere checks that a memory store, a persistent
// store and a store whose messages are not indexed yet (searched by the
// scan of the unindexed tail) rank the same corpus the same way with the
// same scores, scoped or not, with or without context.
func TestScoringSameEverywhere(t *testing.T) {
	mem := openMem(t)
	rankCorpus(t, mem, nil)
	disk := openDir(t, t.TempDir())
	defer disk.Close()
	rankCorpus(t, disk, nil)
	for _, db := range []*DB{mem, disk} {
		if err := db.WaitIndexed(10 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	tail := openMem(t)
	lockIndexer(tail) // nothing gets indexed: every search scans
	defer unlockIndexer(tail)
	rankCorpus(t, tail, nil)
	half := openMem(t) // a indexed, b not
	rankCorpus(t, half, func() {
		if err := half.WaitIndexed(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		lockIndexer(half)
	})
	defer unlockIndexer(half)
	pg := openWith(t, &Options{Postgres: &PostgresOptions{DSN: pgtest.DSN(t)}})
	rankCorpus(t, pg, nil)
	lite := openWith(t, &Options{Spec: sqliteSpec(t)})
	rankCorpus(t, lite, nil)
	if err := lite.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, q := range rankQueries {
		for _, conv := range []string{"", "a", "b"} {
			for _, noContext := range []bool{true, false} {
				o := SearchOptions{NoContext: noContext}
				want, _, err := mem.Search(conv, q, o)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 && conv == "" {
					t.Errorf("Search(%q) found nothing", q)
				}
				for name, db := range map[string]*DB{"persistent": disk, "unindexed": tail, "half indexed": half, "postgres": pg, "sqlite": lite} {
					got, _, err := db.Search(conv, q, o)
					if err != nil {
						t.Fatal(err)
					}
					if !sameRanking(scoredHits(got), scoredHits(want)) {
						t.Errorf("%s, Search(%q, %q, NoContext %v):\n got %v\nwant %v (memory)", name, conv, q, noContext, scoredHits(got), scoredHits(want))
					}
				}
			}
		}
	}
}

// TestBM25Statistics checks a score against the formula computed by hand:
// the average document length is in tokens (stop words excluded), not in
// distinct terms.
func TestBM25Statistics(t *testing.T) { eachBackend(t, testBM25Statistics) }

func testBM25Statistics(t *testing.T, be testBackend) {
	for _, indexed := range []bool{true, false} {
		db := be.open(t)
		if !indexed {
			lockIndexer(db)
		}
		mustCreate(t, db, "a")
		mustAppend(t, db, "a", user("badger badger badger badger"))   // 4 tokens
		mustAppend(t, db, "a", user("the badger runs home"))          // 3 tokens (the is a stop word)
		mustAppend(t, db, "a", user("cats cats cats cats cats cats")) // 6 tokens
		mustAppend(t, db, "a", user(""))                              // no body
		if indexed {
			if err := db.WaitIndexed(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		hits, _, err := db.Search("a", "badger", SearchOptions{NoContext: true})
		if err != nil || len(hits) != 2 {
			t.Fatalf("indexed %v: Search = %v, %v", indexed, scoredHits(hits), err)
		}
		n, df, avgdl := 3.0, 2.0, 13.0/3
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		bm := func(tf, dl float64) float64 {
			return idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avgdl))
		}
		if want := []float64{bm(4, 4), bm(1, 3)}; math.Abs(hits[0].Score-want[0]) > 1e-12 || math.Abs(hits[1].Score-want[1]) > 1e-12 || hits[0].Seq != 1 {
			t.Errorf("indexed %v: scores %v, want %v", indexed, scoredHits(hits), want)
		}
		if !indexed {
			unlockIndexer(db)
		}
	}
}

// TestMaxScoreExact compares the pruned top-k over the index with the
// scan of every message (the unindexed path scores them all) on a random
// corpus: same hits, same order, whatever k. Conversation c is small
// enough to be read whole (readScopeDocs), a is not.
func TestMaxScoreExact(t *testing.T) { eachBackend(t, testMaxScoreExact) }

func testMaxScoreExact(t *testing.T, be testBackend) {
	rng := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon")
	zipf := func() string { return words[min(len(words)-1, int(rng.ExpFloat64()*4))] }
	indexed, scan := be.open(t), be.open(t)
	lockIndexer(scan)
	defer unlockIndexer(scan)
	for _, db := range []*DB{indexed, scan} {
		mustCreate(t, db, "a")
		mustCreate(t, db, "b")
		mustCreate(t, db, "c")
	}
	sizes := map[string]int{}
	for i := 0; i < 600; i++ {
		n := 1 + rng.IntN(12)
		ws := make([]string, n)
		for j := range ws {
			ws[j] = zipf()
		}
		if i%50 == 0 {
			ws = []string{"alpha", "beta"} // duplicates: ties broken by place
		}
		conv := []string{"a", "a", "a", "b", "b", "b", "c"}[rng.IntN(7)]
		sizes[conv]++
		m := Message{Role: RoleUser, Name: []string{"Ann", "Bob"}[i%2], Content: TextContent(strings.Join(ws, " "))}
		for _, db := range []*DB{indexed, scan} {
			if _, err := db.Append(conv, m, AppendOptions{Session: fmt.Sprint(i / 20)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sizes["c"] >= smallScope || sizes["a"] < smallScope {
		t.Fatalf("conversation sizes %v do not cover both paths", sizes)
	}
	if err := indexed.WaitIndexed(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		q := zipf() + " " + zipf() + " " + []string{"", "ann", zipf()}[i%3]
		for _, o := range []SearchOptions{{MaxResults: 5, NoContext: true}, {MaxResults: 40, NoContext: true}, {MaxResults: 10, Offset: 35, NoContext: true}, {MaxResults: 10}} {
			for _, conv := range []string{"", "a", "c"} {
				want, _, _ := scan.Search(conv, q, o)
				got, _, err := indexed.Search(conv, q, o)
				if err != nil {
					t.Fatal(err)
				}
				if !sameRanking(scoredHits(got), scoredHits(want)) {
					t.Fatalf("Search(%q, %q, %+v):\n got %v\nwant %v", conv, q, o, scoredHits(got), scoredHits(want))
				}
			}
		}
	}
}

// TestCommonTermsDropped: a term in most messages neither finds nor ranks.
func TestCommonTermsDropped(t *testing.T) { eachBackend(t, testCommonTermsDropped) }

func testCommonTermsDropped(t *testing.T, be testBackend) {
	defer func(f uint64) { commonFloor = f }(commonFloor)
	commonFloor = 10
	db := be.open(t)
	mustCreate(t, db, "a")
	for i := 0; i < 30; i++ {
		text := "okay sure"
		if i%3 == 0 {
			text = fmt.Sprintf("okay zebra %d", i)
		} else if i%3 == 1 {
			text = fmt.Sprintf("plain words %d", i)
		}
		mustAppend(t, db, "a", user(text))
	}
	for _, indexed := range []bool{false, true} {
		if indexed {
			if err := db.WaitIndexed(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		res, err := db.Find("a", "Okay zebra", SearchOptions{NoContext: true})
		if err != nil || len(res.Hits) != 10 || !slices.Equal(res.Dropped, []string{"Okay"}) {
			t.Errorf("indexed %v: Find(okay zebra) = %d hits, dropped %q, %v", indexed, len(res.Hits), res.Dropped, err)
		}
		res, err = db.Find("a", "okay", SearchOptions{})
		if err != nil || len(res.Hits) != 0 || !slices.Equal(res.Dropped, []string{"okay"}) {
			t.Errorf("indexed %v: Find(okay) = %d hits, dropped %q, %v", indexed, len(res.Hits), res.Dropped, err)
		}
	}
}

// TestLanguage checks the English analyzer (stems, possessives, stop
// words) against LanguageNone, and that reopening a store with another
// language rebuilds its index rather than mixing analyzers.
func TestLanguage(t *testing.T) {
	dir := t.TempDir()
	open := func(lang string) *DB {
		db, err := Open(&Options{Dir: dir, Language: lang, IndexDelay: -1})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.WaitIndexed(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		return db
	}
	count := func(db *DB, q string) int {
		t.Helper()
		hits, _, err := db.Search("a", q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	db := open("")
	mustCreate(t, db, "a")
	mustAppend(t, db, "a", user("Caroline's designs were designed by the designer"))
	mustAppend(t, db, "a", user("we bought a design"))
	cases := []struct {
		q        string
		en, none int
	}{
		{"designing", 2, 0}, {"caroline", 1, 0}, {"Caroline's", 1, 1}, {"the", 0, 1}, {"bought", 1, 1},
	}
	for _, tc := range cases {
		if got := count(db, tc.q); got != tc.en {
			t.Errorf("en: Search(%q) = %d hits, want %d", tc.q, got, tc.en)
		}
	}
	db.Close()
	db = open(LanguageNone)
	defer db.Close()
	for _, tc := range cases {
		if got := count(db, tc.q); got != tc.none {
			t.Errorf("none: Search(%q) = %d hits, want %d", tc.q, got, tc.none)
		}
	}
	if got, _ := db.search.(*indexer).idx.GetInternal(internalSchema); string(got) != "2 none" {
		t.Errorf("schema after reopen = %q", got)
	}
	if _, err := Open(&Options{InMemory: true, Language: "fr"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open(Language fr) = %v, want ErrInvalid", err)
	}
}

// TestRanksAsBadger: on a corpus where some query terms are in hundreds of
// messages (so PostgreSQL ranks the rarer terms' messages first and those
// of the common ones only when they could still enter, candidates; SQLite
// reads them from several segments), every backend returns the hits,
// order and scores of badger's index, whatever the number asked for, the
// filters and the scope.
func TestRanksAsBadger(t *testing.T) {
	for _, be := range backends {
		if be.name != "badger-memory" {
			t.Run(be.name, func(t *testing.T) { testRanksAsBadger(t, be) })
		}
	}
}

func testRanksAsBadger(t *testing.T, be testBackend) {
	rng := rand.New(rand.NewPCG(3, 9))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega")
	zipf := func() string { return words[min(len(words)-1, int(rng.ExpFloat64()*3))] }
	o := be.fresh(t)
	o.IndexBatch = 100 // SQLite: many segments, merged
	other := openWith(t, &o)
	mem := openWith(t, &Options{InMemory: true})
	var entries [2][]Entry
	for i := range 3000 {
		ws := make([]string, 1+rng.IntN(15))
		for j := range ws {
			ws[j] = zipf()
		}
		m := Message{Role: []Role{RoleUser, RoleAssistant}[i%2], Name: []string{"Ann", "Bob", "Cy"}[i%3], Content: TextContent(strings.Join(ws, " "))}
		entries[i%2] = append(entries[i%2], Entry{m, AppendOptions{Session: fmt.Sprint(i / 40)}})
	}
	for _, db := range []*DB{other, mem} {
		for c, es := range entries {
			mustCreate(t, db, fmt.Sprint(c))
			for len(es) > 0 {
				n := min(len(es), MaxBatch)
				if _, err := db.AppendAll(fmt.Sprint(c), es[:n]); err != nil {
					t.Fatal(err)
				}
				es = es[n:]
			}
		}
	}
	for _, db := range []*DB{other, mem} {
		if err := db.WaitIndexed(10e9); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"alpha beta", "alpha omega", "beta gamma psi", "Ann alpha chi", "delta", "omega psi chi phi", "alpha beta gamma delta epsilon"}
	for _, q := range queries {
		for _, conv := range []string{"", "0", "1"} {
			for _, o := range []SearchOptions{
				{MaxResults: 3}, {MaxResults: 40}, {MaxResults: 5, Offset: 30}, {MaxResults: 10, NoContext: true},
				{MaxResults: 10, Roles: []Role{RoleAssistant}}, {MaxResults: 10, Session: "7"},
			} {
				want, _, err := mem.Search(conv, q, o)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := other.Search(conv, q, o)
				if err != nil {
					t.Fatal(err)
				}
				if !sameRanking(scoredHits(got), scoredHits(want)) {
					t.Errorf("Search(%q, %q, %+v):\n got %v\nwant %v", conv, q, o, scoredHits(got), scoredHits(want))
				}
			}
		}
	}
}
