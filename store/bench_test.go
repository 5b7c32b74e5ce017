package store

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Benchmarks. The 1M-message sizes are opt-in: RLMPL_BENCH_LARGE=1.
//
//	go test ./store -run '^$' -bench 'Append|Recent20|Message|Open|Reindex' -benchtime 2s
//	RLMPL_BENCH_LARGE=1 go test ./store -run '^$' -bench 'Recent20|Message|AppendAtHistory|Open|Reindex' -benchtime 2s -timeout 60m
//	RLMPL_BENCH_LARGE=1 nice -n 10 go test ./store -run '^$' -bench Search -benchtime 2000x -timeout 120m
//
// Search reports p50-ms and p99-ms per query mix, with bleve's own search
// of the same index as the baseline in the same run; Append
// reports appends/s with the background indexer running (AppendNoIndex is
// the log alone).

func large() bool { return os.Getenv("RLMPL_BENCH_LARGE") == "1" }

// corpus generates chat-like text: words drawn from a Zipf distribution
// (s = 1.1) over a 20k-word vocabulary, about 20 words (≈140 bytes) per
// message. As in English text, the most frequent ranks are stop words,
// which the analyzer drops; the most common content word (rank 40) is in
// about 6% of the messages.
type corpus struct {
	words []string
	rng   *rand.Rand
	zipf  *rand.Zipf
}

func newCorpus(seed int64) *corpus {
	rng := rand.New(rand.NewSource(seed))
	const syll = "ka lo mi tu re sa no vi de pa ri zo ne ma ti ku be la so fe"
	parts := strings.Fields(syll)
	words := make([]string, 20000)
	seen := map[string]bool{}
	copy(words, stopWords)
	for i := len(stopWords); i < len(words); i++ {
		for {
			var b strings.Builder
			for j := 0; j < 2+rng.Intn(3); j++ {
				b.WriteString(parts[rng.Intn(len(parts))])
			}
			if w := b.String(); !seen[w] {
				seen[w] = true
				words[i] = w
				break
			}
		}
	}
	return &corpus{words: words, rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(words)-1))}
}

// stopWords are the top ranks of the corpus (all in bleve's English list).
var stopWords = strings.Fields(`the of and to a in is it that for was on are as with be at by this have
	from or an but not they which you he she we his her had were been has there their what all if so no`)

func (c *corpus) text() string {
	n := 10 + c.rng.Intn(20)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.words[c.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

// jsonl returns n messages as import input.
func (c *corpus) jsonl(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":%q}`+"\n", role, c.text())
	}
	return b.String()
}

func benchOpen(b *testing.B, dir string, noSync bool) *DB {
	b.Helper()
	db, err := Open(&Options{Dir: dir, NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkAppendNoIndex is the baseline of BenchmarkAppend with the
// background indexer paused: the cost of the log alone.
func BenchmarkAppendNoIndex(b *testing.B) {
	db := benchOpen(b, b.TempDir(), false)
	defer db.Close()
	lockIndexer(db)
	defer unlockIndexer(db)
	mustCreate(b, db, "c")
	c := newCorpus(1)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := db.Append("c", user(c.text()), AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
}

func BenchmarkAppend(b *testing.B) {
	for _, synced := range []bool{true, false} {
		for _, w := range []struct {
			writers int
			convs   int
		}{{1, 1}, {8, 8}, {8, 1}} {
			name := fmt.Sprintf("synced=%v/writers=%d/convs=%d", synced, w.writers, w.convs)
			b.Run(name, func(b *testing.B) {
				db := benchOpen(b, b.TempDir(), !synced)
				defer db.Close()
				for i := 0; i < w.convs; i++ {
					mustCreate(b, db, fmt.Sprint("c", i))
				}
				c := newCorpus(1)
				texts := make([]string, 1024)
				for i := range texts {
					texts[i] = c.text()
				}
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for g := 0; g < w.writers; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						conv := fmt.Sprint("c", g%w.convs)
						for i := g; i < b.N; i += w.writers {
							if _, err := db.Append(conv, user(texts[i%len(texts)]), AppendOptions{}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
			})
		}
	}
}

// BenchmarkAppendDurable compares synced append throughput on the durable
// backends (badger on disk, PostgreSQL) in one run, with 1 writer and with
// 8 writers on 8 conversations.
func BenchmarkAppendDurable(b *testing.B) {
	for _, be := range backends {
		if !be.durable {
			continue
		}
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/writers=%d", be.name, writers), func(b *testing.B) {
				o := be.fresh(b)
				o.Postgres = withPool(o.Postgres, writers)
				db := openWith(b, &o)
				for i := 0; i < writers; i++ {
					mustCreate(b, db, fmt.Sprint("c", i))
				}
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for g := 0; g < writers; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						conv := fmt.Sprint("c", g)
						for i := g; i < b.N; i += writers {
							if _, err := db.Append(conv, user(fmt.Sprint("message ", i)), AppendOptions{}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
			})
		}
	}
}

// withPool gives a PostgreSQL store a connection per writer (nil stays nil).
func withPool(o *PostgresOptions, writers int) *PostgresOptions {
	if o == nil {
		return nil
	}
	o.MaxConns = int32(max(writers, 4))
	return o
}

// historySizes are the conversation lengths for the flat-cost benchmarks.
func historySizes() []int {
	if large() {
		return []int{1000, 100000, 1000000}
	}
	return []int{1000, 10000, 100000}
}

// withHistory opens a store holding one conversation "c" of n messages,
// with the indexer paused (these benchmarks measure the log).
func withHistory(b *testing.B, n int, fn func(db *DB)) {
	dir := b.TempDir()
	db := benchOpen(b, dir, true)
	defer db.Close()
	lockIndexer(db)
	defer unlockIndexer(db)
	mustCreate(b, db, "c")
	c := newCorpus(2)
	for done := 0; done < n; {
		k := min(100000, n-done)
		if _, err := db.Import("c", strings.NewReader(c.jsonl(k)), ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		done += k
	}
	b.ResetTimer()
	fn(db)
}

func BenchmarkRecent20(b *testing.B) {
	for _, n := range historySizes() {
		b.Run(fmt.Sprint("history=", n), func(b *testing.B) {
			withHistory(b, n, func(db *DB) {
				for i := 0; i < b.N; i++ {
					rs, err := db.Messages("c", Recent(20), 0)
					if err != nil || len(rs) != 20 {
						b.Fatal(len(rs), err)
					}
				}
			})
		})
	}
}

func BenchmarkMessage(b *testing.B) {
	for _, n := range historySizes() {
		b.Run(fmt.Sprint("history=", n), func(b *testing.B) {
			withHistory(b, n, func(db *DB) {
				rng := rand.New(rand.NewSource(3))
				for i := 0; i < b.N; i++ {
					if _, err := db.Message("c", 1+rng.Int63n(int64(n))); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkAppendAtHistory shows that append cost does not grow with the
// conversation's length.
func BenchmarkAppendAtHistory(b *testing.B) {
	for _, n := range historySizes() {
		b.Run(fmt.Sprint("history=", n), func(b *testing.B) {
			withHistory(b, n, func(db *DB) {
				for i := 0; i < b.N; i++ {
					if _, err := db.Append("c", user("one more message"), AppendOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// searchCorpus builds a store of convs conversations of per messages
// each, in the benchmark's temp dir, and waits for the index. A fraction
// common of the messages starts with "okay", a term in most messages. With
// RLMPL_BENCH_DIR set, the store is kept there and reused by later runs
// (building 1M messages takes minutes).
func searchCorpus(b *testing.B, convs, per int, common float64) (*DB, *corpus) {
	c := newCorpus(4)
	dir := filepath.Join(b.TempDir(), "db")
	if keep := os.Getenv("RLMPL_BENCH_DIR"); keep != "" {
		dir = filepath.Join(keep, fmt.Sprintf("search-%dx%d-%g", convs, per, common))
		if _, err := os.Stat(filepath.Join(dir, "built")); err == nil {
			db := benchOpen(b, dir, true)
			if err := db.WaitIndexed(2 * time.Hour); err != nil {
				b.Fatal(err)
			}
			return db, c
		}
		os.RemoveAll(dir)
	}
	db := benchOpen(b, dir, true)
	start := time.Now()
	for i := 0; i < convs; i++ {
		id := fmt.Sprint("conv", i)
		mustCreate(b, db, id)
		for done := 0; done < per; {
			k := min(100000, per-done)
			var in strings.Builder
			for j := 0; j < k; j++ {
				text := c.text()
				if c.rng.Float64() < common {
					text = "okay " + text
				}
				fmt.Fprintf(&in, `{"role":%q,"content":%q}`+"\n", []string{"user", "assistant"}[j%2], text)
			}
			if _, err := db.Import(id, strings.NewReader(in.String()), ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			done += k
		}
	}
	imported := time.Since(start)
	if err := db.WaitIndexed(2 * time.Hour); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d × %d messages: import %v, indexed after %v", convs, per, imported.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if os.Getenv("RLMPL_BENCH_DIR") != "" {
		if err := os.WriteFile(filepath.Join(dir, "built"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return db, c
}

// searchQueries are the benchmark's query mixes over corpus words (ranks
// below 44 are stop words; the most common content words, ranks 44-60,
// are each in 3-5% of the messages):
//
//	selective  rarer words, as a question about a detail
//	broad      a word in most messages ("okay", 90%) with others: the
//	           case #18 measured at 132 ms
//	dense      several of the most common content words: MaxScore cannot
//	           skip much of them (bleve keeps no per-block maximum to
//	           prune with), so their cost follows their postings
func searchQueries(w []string) map[string][]string {
	return map[string][]string{
		"selective": {
			w[3000], w[7000] + " " + w[8000], w[15000], w[100] + " " + w[3000], w[500] + " " + w[900] + " " + w[1300],
			w[70] + " " + w[19000], "nosuchwordanywhere", w[200] + " " + w[5001], w[2500] + " " + w[2600],
		},
		"broad": {
			"okay", "okay " + w[3000], "okay " + w[50] + " " + w[700], "the okay " + w[60] + " " + w[2000],
			"okay " + w[100] + " " + w[101], "okay " + w[44],
		},
		"dense": {
			w[44], w[0] + " " + w[45], w[44] + " " + w[45] + " " + w[46] + " " + w[47], w[50] + " " + w[60], w[44] + " " + w[48] + " " + w[3000],
		},
	}
}

// BenchmarkSearch reports p50-ms and p99-ms of the store's search (the
// default: ranked, with context) over query mixes, and the same figures
// of bleve's own BM25 top-k over the same index and queries (the search
// before #18: a disjunction of the body terms, scoped by a zero-boost
// conjunction), as baseline-p50-ms and baseline-p99-ms. Layouts: many
// short conversations (1M messages: 20,000 × 50) and one long one (1M
// messages); without RLMPL_BENCH_LARGE, 400 × 50 and 1 × 20,000.
func BenchmarkSearch(b *testing.B) {
	type layout struct {
		name       string
		convs, per int
	}
	layouts := []layout{{"many", 400, 50}, {"one", 1, 20000}}
	if large() {
		layouts = []layout{{"many", 20000, 50}, {"one", 1, 1000000}}
	}
	for _, l := range layouts {
		b.Run(fmt.Sprintf("%s=%dx%d", l.name, l.convs, l.per), func(b *testing.B) {
			db, c := searchCorpus(b, l.convs, l.per, 0.9)
			defer db.Close()
			queries := searchQueries(c.words)
			for _, mix := range []string{"selective", "broad", "dense"} {
				for _, scoped := range []bool{true, false} {
					if l.convs == 1 && !scoped {
						continue // the same as scoped
					}
					b.Run(fmt.Sprintf("%s/scoped=%v", mix, scoped), func(b *testing.B) {
						qs := queries[mix]
						conv := func(i int) string {
							if scoped {
								return fmt.Sprint("conv", i%l.convs)
							}
							return ""
						}
						ours := make([]time.Duration, 0, b.N)
						base := make([]time.Duration, 0, b.N)
						perQuery := make([][]time.Duration, len(qs))
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							t0 := time.Now()
							if _, err := db.Find(conv(i), qs[i%len(qs)], SearchOptions{MaxResults: 10}); err != nil {
								b.Fatal(err)
							}
							d := time.Since(t0)
							ours = append(ours, d)
							perQuery[i%len(qs)] = append(perQuery[i%len(qs)], d)
						}
						b.StopTimer()
						for j, lat := range perQuery {
							if len(lat) > 0 {
								p50, p99 := percentiles(lat)
								b.Logf("%-40q p50 %6.2f ms  p99 %6.2f ms", qs[j], p50, p99)
							}
						}
						for i := 0; i < b.N; i++ {
							t0 := time.Now()
							if err := bleveSearch(db, conv(i), qs[i%len(qs)], 10); err != nil {
								b.Fatal(err)
							}
							base = append(base, time.Since(t0))
						}
						p50, p99 := percentiles(ours)
						b50, b99 := percentiles(base)
						b.ReportMetric(p50, "p50-ms")
						b.ReportMetric(p99, "p99-ms")
						b.ReportMetric(b50, "baseline-p50-ms")
						b.ReportMetric(b99, "baseline-p99-ms")
					})
				}
			}
		})
	}
}

func percentiles(lat []time.Duration) (p50, p99 float64) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
}

// bleveSearch is the baseline, what the store's search did before #18:
// bleve's BM25 top-(k+1) over the body field of the same index (the extra
// hit tells whether there is a next page), then the records of the k best.
func bleveSearch(db *DB, conv, q string, k int) error {
	var ts []query.Query
	for _, t := range db.search.(*indexer).an.queryTerms(q) {
		tq := bleve.NewTermQuery(t.term)
		tq.SetField(fieldBody)
		ts = append(ts, tq)
	}
	if len(ts) == 0 {
		return nil
	}
	var bq query.Query = bleve.NewDisjunctionQuery(ts...)
	if conv != "" {
		cs, err := db.conv(conv)
		if err != nil {
			return err
		}
		scope := bleve.NewTermQuery(convTerm(cs.num))
		scope.SetField(fieldConv)
		scope.SetBoost(0)
		bq = bleve.NewConjunctionQuery(bq, scope)
	}
	db.search.(*indexer).idxMu.RLock()
	res, err := db.search.(*indexer).idx.Search(bleve.NewSearchRequestOptions(bq, k+1, 0, false))
	db.search.(*indexer).idxMu.RUnlock()
	if err != nil {
		return err
	}
	return db.kv.View(func(t kvTxn) error {
		for _, h := range res.Hits[:min(k, len(res.Hits))] {
			num, seq, ok := parseDocID(h.ID)
			if !ok {
				return corrupt("index document id %q", h.ID)
			}
			c, err := db.convByNum(num)
			if err != nil {
				return err
			}
			if _, err := readRecord(t, c, seq); err != nil {
				return err
			}
		}
		return nil
	})
}

func BenchmarkOpen(b *testing.B) {
	n := 100000
	if large() {
		n = 1000000
	}
	dir := b.TempDir()
	db := benchOpen(b, dir, true)
	c := newCorpus(5)
	for i := 0; i < n/50; i++ {
		id := fmt.Sprint("conv", i)
		mustCreate(b, db, id)
		if _, err := db.Import(id, strings.NewReader(c.jsonl(50)), ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.WaitIndexed(2 * time.Hour); err != nil {
		b.Fatal(err)
	}
	db.Close()
	b.Run(fmt.Sprint("messages=", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			db := benchOpen(b, dir, true)
			b.StopTimer()
			db.Close()
			b.StartTimer()
		}
	})
}

func BenchmarkReindex(b *testing.B) {
	convs := 400
	if large() {
		convs = 20000
	}
	db, _ := searchCorpus(b, convs, 50, 0)
	defer db.Close()
	b.Run(fmt.Sprint("messages=", convs*50), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if err := db.Reindex(2 * time.Hour); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(convs*50)/time.Since(t0).Seconds(), "docs/s")
		}
	})
}
