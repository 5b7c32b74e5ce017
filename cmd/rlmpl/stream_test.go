package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestChatStreamsADirectAnswer: a planner that answers directly
// (final with literal text) is streamed, and the answer's text reaches
// chat as delta events while the planner writes it, before the answer
// event — escapes decoded across chunk boundaries.
func TestChatStreamsADirectAnswer(t *testing.T) {
	chunk := func(s string) string {
		b, _ := json.Marshal(s)
		return `{"choices":[{"index":0,"delta":{"content":` + string(b) + `}}]}`
	}
	srv := providertest.NewServer(providertest.SSE(chunk(`{"steps":[{"op":"final","value":"Hel`), chunk(`lo \"th`), chunk(`ere\""}]}`),
		`{"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}`, "[DONE]"))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--json", "--state", t.TempDir(), "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06"}, strings.NewReader("hi\n"), &stdout, &stderr)
	var deltas []string
	answer := ""
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not NDJSON: %q", l)
		}
		switch e["event"] {
		case "delta":
			if answer != "" {
				t.Fatalf("a delta after the answer:\n%s", stdout.String())
			}
			deltas = append(deltas, e["text"].(string))
		case "answer":
			answer = e["text"].(string)
		}
	}
	if code != 0 || answer != `Hello "there"` || strings.Join(deltas, "|") != `Hel|lo "th|ere"` {
		t.Fatalf("%d: deltas %q, answer %q\n%s", code, deltas, answer, stderr.String())
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Body["stream"] != true {
		t.Fatalf("the planner's request was not streamed: %+v", reqs)
	}
}
