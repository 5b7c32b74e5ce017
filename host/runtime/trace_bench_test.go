package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/rlmpl/rlmpl/host/plan"
)

// BenchmarkTurnTracing: the host overhead of a managed turn (instant
// planner, synced appends, 1k stored messages: BenchmarkTurn's setup)
// with tracing off (no TracerProvider) and on (the SDK's batch processor
// exporting OTLP/HTTP to an in-process receiver), alternating turn by turn
// on two runtimes over the same store directory layout, so both see the
// same machine load. Reports each p50 and the ratio on/off (target ≤
// 1.1×).
//
//	go test ./host/runtime -run '^$' -bench TurnTracing -benchtime 300x -count 3
func BenchmarkTurnTracing(b *testing.B) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(recv.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer tp.Shutdown(context.Background())
	jsonl := benchTranscript(1000)
	off := benchConv(b, Options{}, StoreSpec{Dir: "bench"}, jsonl)
	on := benchConv(b, Options{TracerProvider: tp}, StoreSpec{Dir: "bench"}, jsonl)
	opts := benchTurnOptions()
	opts.Completion = plan.Input{Providers: []string{"local"}}
	turn := func(c Conversation) time.Duration {
		t := time.Now()
		if _, err := c.Turn(context.Background(), user("what did we decide about the lease path?"), opts); err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	var offs, ons []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			offs, ons = append(offs, turn(off)), append(ons, turn(on))
		} else {
			ons, offs = append(ons, turn(on)), append(offs, turn(off))
		}
		i++
	}
	p50 := func(s []time.Duration) float64 {
		s = slices.Clone(s)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(offs), "off-p50-ms")
	b.ReportMetric(p50(ons), "on-p50-ms")
	b.ReportMetric(p50(ons)/p50(offs), "on/off")
}
