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
)

// Benchmarks. The 1M-message sizes are opt-in: RLMPL_BENCH_LARGE=1.
//
//	go test ./store -run '^$' -bench 'Append|Recent20|Message|Open|Reindex' -benchtime 2s
//	RLMPL_BENCH_LARGE=1 go test ./store -run '^$' -bench 'Recent20|Message|AppendAtHistory|Open|Reindex' -benchtime 2s -timeout 60m
//	RLMPL_BENCH_LARGE=1 go test ./store -run '^$' -bench Search -benchtime 2000x -timeout 60m
//
// Search reports p50-ms and p99-ms over a fixed mix of 12 queries; Append
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
	db.ix.work.Lock()
	defer db.ix.work.Unlock()
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
	db.ix.work.Lock()
	defer db.ix.work.Unlock()
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

// searchCorpus builds (once per size, under the benchmark's temp dir) a
// store of convs × 50 messages and waits for the index.
func searchCorpus(b *testing.B, convs int) (*DB, *corpus) {
	db := benchOpen(b, filepath.Join(b.TempDir(), "db"), true)
	c := newCorpus(4)
	start := time.Now()
	for i := 0; i < convs; i++ {
		id := fmt.Sprint("conv", i)
		mustCreate(b, db, id)
		if _, err := db.Import(id, strings.NewReader(c.jsonl(50)), ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	imported := time.Since(start)
	if err := db.WaitIndexed(2 * time.Hour); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d messages: import %v, indexed after %v", convs*50, imported.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return db, c
}

func BenchmarkSearch(b *testing.B) {
	sizes := []int{400} // 20k messages
	if large() {
		sizes = []int{20000} // 1M messages
	}
	for _, convs := range sizes {
		b.Run(fmt.Sprint("messages=", convs*50), func(b *testing.B) {
			db, c := searchCorpus(b, convs)
			defer db.Close()
			w := c.words
			// 2–4 words of varying selectivity (ranks 40.. are content words),
			// a stop word with a content word, and a term with no hits.
			queries := []string{
				w[40], w[0] + " " + w[45], w[50] + " " + w[60],
				w[100] + " " + w[3000], w[41] + " " + w[42] + " " + w[43], w[500],
				w[15000], w[44] + " " + w[45] + " " + w[46] + " " + w[47], w[7000] + " " + w[8000],
				w[70] + " " + w[19000], "nosuchwordanywhere", w[200] + " " + w[201],
			}
			for _, scoped := range []bool{false, true} {
				b.Run(fmt.Sprint("scoped=", scoped), func(b *testing.B) {
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						conv := ""
						if scoped {
							conv = fmt.Sprint("conv", i%convs)
						}
						t0 := time.Now()
						if _, _, err := db.Search(conv, queries[i%len(queries)], SearchOptions{MaxResults: 10}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
					}
					b.StopTimer()
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				})
			}
		})
	}
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
	db, _ := searchCorpus(b, convs)
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
