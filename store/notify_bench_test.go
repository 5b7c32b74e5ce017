package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkNotify is the cost of a live conversation: from the start of
// an append in one store to a Wait in another returning it (PostgreSQL:
// two stores on one database, sharing only the database as two processes
// do; NOTIFY, then LISTEN). Badger's row is the in-process path (one
// store, the waiter in another goroutine). Each row also reports the
// append alone (append-p50-ms), so the notification's share shows.
func BenchmarkNotify(b *testing.B) {
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(be.name, func(b *testing.B) {
			o := be.fresh(b)
			writer := openWith(b, &o)
			waiter := writer
			if o.Postgres != nil {
				waiter = openWith(b, &Options{Postgres: o.Postgres})
			}
			mustCreate(b, writer, "c")
			mustAppend(b, writer, "c", user("first"))
			ctx := context.Background()
			if _, err := waiter.Wait(ctx, "c", 0); err != nil { // starts listening
				b.Fatal(err)
			}
			var seen, appended []time.Duration
			head := int64(1)
			for b.Loop() {
				woke := make(chan time.Time, 1)
				go func(after int64) {
					if _, err := waiter.Wait(ctx, "c", after); err != nil {
						b.Error(err)
					}
					woke <- time.Now()
				}(head)
				time.Sleep(200 * time.Microsecond) // the waiter is waiting
				start := time.Now()
				mustAppend(b, writer, "c", user(fmt.Sprint("message ", head)))
				appended = append(appended, time.Since(start))
				seen = append(seen, (<-woke).Sub(start))
				head++
			}
			p50, p99 := percentiles(seen)
			a50, _ := percentiles(appended)
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.ReportMetric(a50, "append-p50-ms")
		})
	}
}

// BenchmarkSearchBackends: ranked search (MaxResults 10, with context) in
// one conversation of 100,000 messages (RLMPL_BENCH_LARGE: 1,000,000) on
// badger on disk and on PostgreSQL in one run, over the selective and
// broad query mixes of BenchmarkSearch, p50 and p99: badger with its
// bleve postings, PostgreSQL with its own full-text index (pgsearch.go).
func BenchmarkSearchBackends(b *testing.B) {
	n := 100000
	if large() {
		n = 1000000
	}
	c := newCorpus(4)
	var in strings.Builder
	for j := range n {
		text := c.text()
		if c.rng.Float64() < 0.9 {
			text = "okay " + text
		}
		fmt.Fprintf(&in, `{"role":%q,"content":%q}`+"\n", []string{"user", "assistant"}[j%2], text)
	}
	jsonl := in.String()
	queries := searchQueries(c.words)
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(fmt.Sprintf("%s/messages=%d", be.name, n), func(b *testing.B) {
			o := be.fresh(b)
			o.NoSync = true
			db := openWith(b, &o)
			mustCreate(b, db, "c")
			if _, err := db.Import("c", strings.NewReader(jsonl), ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			if err := db.WaitIndexed(time.Hour); err != nil {
				b.Fatal(err)
			}
			for _, mix := range []string{"selective", "broad"} {
				b.Run(mix, func(b *testing.B) {
					qs := queries[mix]
					var lat []time.Duration
					i := 0
					for b.Loop() {
						t0 := time.Now()
						if _, err := db.Find("c", qs[i%len(qs)], SearchOptions{MaxResults: 10}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
						i++
					}
					p50, p99 := percentiles(lat)
					b.ReportMetric(p50, "p50-ms")
					b.ReportMetric(p99, "p99-ms")
				})
			}
		})
	}
}

// BenchmarkLongQueries: ranked search with queries of 16, 64 and
// MaxQueryTerms distinct words (the longest accepted) in a conversation of
// 2,000 messages and one of 10 MB holding every word, on badger on disk
// and on PostgreSQL in one run: what bounds a query's cost is its terms,
// and a huge message is read once per search, not once per term.
func BenchmarkLongQueries(b *testing.B) {
	c := newCorpus(5)
	words := c.words[len(stopWords):]
	var huge strings.Builder
	for huge.Len() < 10<<20 {
		huge.WriteString(words[c.rng.Intn(len(words))] + " ")
	}
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(be.name, func(b *testing.B) {
			o := be.fresh(b)
			o.NoSync = true
			db := openWith(b, &o)
			mustCreate(b, db, "c")
			if _, err := db.Import("c", strings.NewReader(c.jsonl(2000)), ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			mustAppend(b, db, "c", user(huge.String()))
			if err := db.WaitIndexed(time.Hour); err != nil {
				b.Fatal(err)
			}
			for _, n := range []int{16, 64, MaxQueryTerms} {
				q := strings.Join(words[:n], " ")
				b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
					for b.Loop() {
						if _, err := db.Find("c", q, SearchOptions{MaxResults: 10}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
