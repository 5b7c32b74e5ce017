package runtime

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
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
	conv := func(o *Options) Conversation {
		o.StateDir = b.TempDir()
		rt, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { rt.Close() })
		st, err := rt.OpenStore(StoreSpec{Dir: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		st.Create("c", nil)
		c := st.Conversation("c")
		var sb strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&sb, `{"role":%q,"content":"message %d about the lease path and topic%d; %s"}`+"\n",
				[]string{"user", "assistant"}[i%2], i, i%997, strings.Repeat("detail ", 20+i%40))
		}
		if _, err := c.Import(strings.NewReader(sb.String()), ImportOptions{Encodings: []string{"o200k_base"}, WaitIndexed: time.Minute}); err != nil {
			b.Fatal(err)
		}
		return c
	}
	off, on := conv(&Options{}), conv(&Options{TracerProvider: tp})
	opts := TurnOptions{
		Pack: PackOptions{Policy: pack.Policy{MaxContextTokens: 131072, ProviderContextTokens: 131072, ReserveOutputTokens: 16384,
			SafetyMarginTokens: 4096, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: pack.Contiguous},
			Model: "gpt-4o-2024-08-06", Boundary: true, BoundaryTemplate: "Sequences 1..{cold_through} may be absent.",
			Utilities: pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}},
		Encodings:  []string{"o200k_base"},
		Completion: plan.Input{Providers: []string{"local"}},
		Deps:       plan.Deps{Planner: instantPlanner{}},
		Handles:    handle.New(nil),
	}
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
