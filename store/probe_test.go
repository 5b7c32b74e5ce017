package store

import (
	"context"
	"os"
	"testing"
	"time"

	index "github.com/blevesearch/bleve_index_api"
)

func BenchmarkProbe(b *testing.B) {
	dir := os.Getenv("PROBE_DIR")
	if dir == "" {
		b.Skip()
	}
	db := benchOpen(b, dir, true)
	defer db.Close()
	q := os.Getenv("PROBE_Q")
	b.Run("find", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := db.Find("conv0", q, SearchOptions{MaxResults: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nocontext", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := db.Find("conv0", q, SearchOptions{MaxResults: 10, NoContext: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rawscan", func(b *testing.B) {
		adv, _ := db.ix.idx.Advanced()
		r, _ := adv.Reader()
		defer r.Close()
		for i := 0; i < b.N; i++ {
			n := 0
			t0 := time.Now()
			for _, t := range db.ix.an.queryTerms(q) {
				tfr, _ := r.TermFieldReader(context.Background(), []byte(t.term), fieldBody, true, true, false)
				var d index.TermFieldDoc
				for {
					p, _ := tfr.Next(d.Reset())
					if p == nil {
						break
					}
					n++
				}
				tfr.Close()
			}
			b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(n), "ns/posting")
			b.ReportMetric(float64(n), "postings")
		}
	})
	b.Run("rawscan-nofreq", func(b *testing.B) {
		adv, _ := db.ix.idx.Advanced()
		r, _ := adv.Reader()
		defer r.Close()
		for i := 0; i < b.N; i++ {
			n := 0
			t0 := time.Now()
			for _, t := range db.ix.an.queryTerms(q) {
				tfr, _ := r.TermFieldReader(context.Background(), []byte(t.term), fieldBody, false, false, false)
				var d index.TermFieldDoc
				for {
					p, _ := tfr.Next(d.Reset())
					if p == nil {
						break
					}
					n++
				}
				tfr.Close()
			}
			b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(n), "ns/posting")
		}
	})
}
