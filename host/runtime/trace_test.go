package runtime

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes what
// the real exporter posts to /v1/traces.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var msg coltrace.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &msg) != nil {
			t.Errorf("receiver: %s %s (%s)", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
			w.WriteHeader(400)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	t.Cleanup(r.Close)
	return r
}

// countTool counts the items it is given.
type countTool struct{}

func (countTool) Call(ctx context.Context, name string, args any) (any, error) {
	if l, ok := args.([]any); ok {
		return int64(len(l)), nil
	}
	return int64(0), nil
}

func attrs(s *tracepb.Span) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestTurnTracesOverOTLP: a managed turn against a scripted HTTP provider,
// traced through the real OTLP/HTTP exporter into an in-process receiver:
// the turn span holds a pack, a chat call, a retrieval and a tool span, with
// the GenAI attributes and ours; the provider received the turn's trace
// context; without opt-in no message content is exported, with it the
// request is; the key never is.
func TestTurnTracesOverOTLP(t *testing.T) {
	const secret = "sk-test-do-not-export-7f3a"
	planText := `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"hits"},` +
		`{"op":"tool","name":"count_items","args":{"ref":"var","name":"hits"},"bind":"n"},{"op":"final","value":{"ref":"var","name":"n"}}]}`
	usage := `{"prompt_tokens":900,"completion_tokens":40,"prompt_tokens_details":{"cached_tokens":512,"cache_write_tokens":128},"completion_tokens_details":{"reasoning_tokens":8}}`
	for _, content := range []bool{false, true} {
		t.Run(map[bool]string{false: "no content", true: "content"}[content], func(t *testing.T) {
			srv := providertest.NewServer(providertest.CompletionUsage(planText, usage))
			defer srv.Close()
			recv := newOTLPReceiver(t)
			ctx := context.Background()
			exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(recv.URL+"/v1/traces"))
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
			p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m-1", Credential: "TEST_KEY",
				Getenv: func(string) string { return secret }})
			if err != nil {
				t.Fatal(err)
			}
			c := memConvWith(t, &Options{TracerProvider: tp, TraceContent: content},
				user("the needle is in the haystack"), store.Message{Role: store.RoleAssistant, Content: store.TextContent("noted")})
			opts := turnOpts(httpPlanner{p}, handle.New(nil))
			opts.Completion.Capabilities = []plan.Capability{{Kind: "context", Name: "search"}, {Kind: "tool", Name: "count_items"}}
			opts.Deps.Tools = countTool{}
			opts.Completion.Tools = []plan.ToolSchema{{Name: "count_items", Description: "counts items", Schema: `{"type":"array"}`}}
			opts.TurnID = "t1"
			if _, err := c.Turn(ctx, user("where is the needle?"), opts); err != nil {
				t.Fatal(err)
			}
			if err := tp.Shutdown(ctx); err != nil { // flushes to the receiver
				t.Fatal(err)
			}
			byName := map[string]*tracepb.Span{}
			for _, s := range recv.spans {
				byName[s.Name] = s
			}
			root := byName["invoke_agent rlmpl"]
			if root == nil || len(recv.spans) != 5 {
				names := []string{}
				for _, s := range recv.spans {
					names = append(names, s.Name)
				}
				t.Fatalf("spans %v", names)
			}
			for _, name := range []string{"pack", "chat m-1", "retrieval", "execute_tool count_items"} {
				s := byName[name]
				if s == nil || string(s.ParentSpanId) != string(root.SpanId) || string(s.TraceId) != string(root.TraceId) {
					t.Fatalf("span %q missing or not a child of the turn: %v", name, s)
				}
			}
			ra := attrs(root)
			if ra["gen_ai.operation.name"].GetStringValue() != "invoke_agent" || ra["gen_ai.conversation.id"].GetStringValue() != c.ID() ||
				ra["rlmpl.turn.id"].GetStringValue() != "t1" || ra["rlmpl.turn.status"].GetStringValue() != StatusCompleted ||
				ra["gen_ai.usage.cache_read.input_tokens"].GetIntValue() != 512 || ra["gen_ai.usage.cache_write.input_tokens"].GetIntValue() != 128 {
				t.Errorf("turn span attributes %v", root.Attributes)
			}
			chat := byName["chat m-1"]
			ca := attrs(chat)
			if chat.Kind != tracepb.Span_SPAN_KIND_CLIENT || ca["gen_ai.operation.name"].GetStringValue() != "chat" ||
				ca["gen_ai.request.model"].GetStringValue() != "m-1" || ca["gen_ai.response.model"].GetStringValue() != "test" ||
				ca["gen_ai.provider.name"].GetStringValue() != "local" || ca["gen_ai.usage.input_tokens"].GetIntValue() != 900 ||
				ca["gen_ai.usage.output_tokens"].GetIntValue() != 40 || ca["gen_ai.usage.cache_read.input_tokens"].GetIntValue() != 512 ||
				ca["gen_ai.usage.cache_write.input_tokens"].GetIntValue() != 128 || ca["gen_ai.usage.cache_creation.input_tokens"].GetIntValue() != 128 ||
				ca["gen_ai.usage.reasoning.output_tokens"].GetIntValue() != 8 ||
				ca["gen_ai.response.finish_reasons"].GetArrayValue().GetValues()[0].GetStringValue() != "stop" ||
				ca["rlmpl.request.local_tokens"].GetIntValue() == 0 || ca["rlmpl.request.count_method"].GetStringValue() == "" ||
				len(ca["rlmpl.request.sha256"].GetStringValue()) != 64 {
				t.Errorf("chat span attributes %v", chat.Attributes)
			}
			pa := attrs(byName["pack"])
			if pa["rlmpl.pack.purpose"].GetStringValue() != "planner" || pa["rlmpl.solver.status"].GetStringValue() == "" ||
				len(pa["rlmpl.pack.stage.names"].GetArrayValue().GetValues()) == 0 || pa["rlmpl.pack.total_tokens"].GetIntValue() == 0 {
				t.Errorf("pack span attributes %v", byName["pack"].Attributes)
			}
			if hits := attrs(byName["retrieval"])["rlmpl.retrieval.hit_sequences"].GetArrayValue().GetValues(); len(hits) != 2 || hits[1].GetIntValue() != 1 {
				t.Errorf("retrieval hits %v", hits)
			}
			// The provider saw the turn's trace in a W3C traceparent.
			tp0 := srv.Requests()[0].Header.Get("traceparent")
			if !strings.Contains(tp0, hex.EncodeToString(root.TraceId)) || !strings.Contains(tp0, hex.EncodeToString(chat.SpanId)) {
				t.Errorf("traceparent %q, trace %x, chat span %x", tp0, root.TraceId, chat.SpanId)
			}
			// Content only on opt-in; the key never.
			var all strings.Builder
			for _, s := range recv.spans {
				b, _ := proto.Marshal(s)
				all.Write(b)
			}
			if strings.Contains(all.String(), secret) {
				t.Fatal("the API key reached a span")
			}
			if got := strings.Contains(all.String(), "where is the needle?"); got != content {
				t.Errorf("message content exported = %v with TraceContent %v", got, content)
			}
			if _, has := ca["gen_ai.input.messages"]; has != content {
				t.Errorf("gen_ai.input.messages present = %v with TraceContent %v", has, content)
			}
		})
	}
}

// TestNoTracerNoTraceparent: with tracing off the provider receives no
// trace context and the request bytes are those of a traced run.
func TestNoTracerNoTraceparent(t *testing.T) {
	var bodies []string
	for _, traced := range []bool{false, true} {
		srv := providertest.NewServer(providertest.Completion(final("hi"), 10, 2))
		p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		var o Options
		if traced {
			o.TracerProvider = sdktrace.NewTracerProvider()
		}
		c := memConvWith(t, &o)
		opts := turnOpts(httpPlanner{p}, handle.New(nil))
		opts.TurnID = "same"
		if _, err := c.Turn(context.Background(), user("hello"), opts); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[0]
		if has := r.Header.Get("traceparent") != ""; has != traced {
			t.Errorf("traced=%v: traceparent %q", traced, r.Header.Get("traceparent"))
		}
		bodies = append(bodies, r.Raw)
		srv.Close()
	}
	if bodies[0] != bodies[1] {
		t.Errorf("tracing changed the request body:\n%s\n%s", bodies[0], bodies[1])
	}
}
