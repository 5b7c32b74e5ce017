package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// BenchmarkBadgerSyncedSet is BenchmarkAppend's baseline, run beside it:
// badger alone doing synced sets of the same texts with the options the
// store uses, 1 and 8 writers (a transaction each). Compare appends/s
// with BenchmarkAppend/synced=true in the same run.
func BenchmarkBadgerSyncedSet(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			kv, err := openBadger(b.TempDir(), false, true, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer kv.Close()
			c := newCorpus(1)
			texts := make([][]byte, 1024)
			for i := range texts {
				texts[i] = []byte(c.text())
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for g := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < b.N; i += writers {
						err := kv.db.Update(func(t *badger.Txn) error {
							return t.Set([]byte(fmt.Sprintf("k%d/%012d", g, i)), texts[i%len(texts)])
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sets/s")
		})
	}
}
