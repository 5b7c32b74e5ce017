package store

import (
	"context"
	"fmt"
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
