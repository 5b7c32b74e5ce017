package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestChatConsoleTraces: OTEL_TRACES_EXPORTER=console prints each span of
// a chat turn as one JSON line on stderr — the turn, its packs and its
// provider calls, in one trace — and the provider receives a traceparent;
// an unknown exporter is a configuration error, nothing run.
func TestChatConsoleTraces(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_SERVICE_NAME", "chat-test")
	srv := providertest.NewServer(
		providertest.Completion(plannerAnswer, 900, 40),
		providertest.CompletionUsage("Hello there", `{"prompt_tokens":120,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":64}}`),
	)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--state", t.TempDir(), "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06", "--max-context", "16000"}, strings.NewReader("hi\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("chat: %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	type span struct {
		Name        string
		SpanContext struct{ TraceID, SpanID string }
		Parent      struct{ SpanID string }
		Attributes  []struct {
			Key   string
			Value struct{ Value any }
		}
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	var spans []span
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var s span
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("stderr line is not a JSON span: %v\n%s", err, line)
		}
		spans = append(spans, s)
	}
	names := map[string]int{}
	for _, s := range spans {
		names[s.Name]++
		if s.SpanContext.TraceID != spans[0].SpanContext.TraceID {
			t.Errorf("span %s in another trace", s.Name)
		}
	}
	if names["invoke_agent rlmpl"] != 1 || names["pack"] != 2 || names["chat gpt-4o-2024-08-06"] != 2 {
		t.Fatalf("spans %v", names)
	}
	service := ""
	for _, kv := range spans[0].Resource {
		if kv.Key == "service.name" {
			service, _ = kv.Value.Value.(string)
		}
	}
	if service != "chat-test" {
		t.Errorf("service.name = %q", service)
	}
	for _, r := range srv.Requests() {
		if !strings.Contains(r.Header.Get("traceparent"), spans[0].SpanContext.TraceID) {
			t.Errorf("traceparent %q, trace %s", r.Header.Get("traceparent"), spans[0].SpanContext.TraceID)
		}
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	stderr.Reset()
	code = run(context.Background(), []string{"chat", "--state", t.TempDir(), "--conv", "demo", "--base-url", srv.BaseURL()}, strings.NewReader("hi\n"), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "OTEL_TRACES_EXPORTER=zipkin") {
		t.Errorf("unknown exporter: exit %d, %s", code, stderr.String())
	}
}

// TestChatJSONLogs: --log-format json prints slog JSON lines on stderr;
// every line a turn logs (its packs and provider calls at debug, its end)
// carries the conversation and turn ids; a bad format is a usage error.
func TestChatJSONLogs(t *testing.T) {
	srv := providertest.NewServer(
		providertest.Completion(plannerAnswer, 900, 40),
		providertest.CompletionUsage("Hello there", `{"prompt_tokens":120,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":64}}`),
	)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--state", t.TempDir(), "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06", "--max-context", "16000", "--log-format", "json", "--log-level", "debug"},
		strings.NewReader("hi\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("chat: %d\n%s", code, stderr.String())
	}
	msgs := map[string]int{}
	turnID := ""
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON log line: %s", line)
		}
		msg, _ := m["msg"].(string)
		switch msg {
		case "pack", "provider call", "turn completed":
		default:
			continue // the store's own diagnostics
		}
		msgs[msg]++
		id, _ := m["turn_id"].(string)
		if m["conversation_id"] != "demo" || id == "" || turnID != "" && id != turnID {
			t.Errorf("line without the turn's ids: %s", line)
		}
		turnID = id
		if msg == "turn completed" && (m["prompt_tokens"] != 1020.0 || m["cached_tokens"] != 64.0) {
			t.Errorf("turn completed: %s", line)
		}
	}
	if msgs["pack"] != 2 || msgs["provider call"] != 2 || msgs["turn completed"] != 1 {
		t.Fatalf("log lines %v\n%s", msgs, stderr.String())
	}
	stderr.Reset()
	code = run(context.Background(), []string{"chat", "--state", t.TempDir(), "--conv", "demo", "--base-url", srv.BaseURL(), "--log-format", "xml"},
		strings.NewReader("hi\n"), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--log-format") {
		t.Errorf("bad format: exit %d, %s", code, stderr.String())
	}
}
