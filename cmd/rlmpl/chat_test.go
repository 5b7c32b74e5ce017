package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// plannerAnswer is a provider's chat completion whose text is a plan: a
// model step, then its answer as the final value.
const plannerAnswer = `{"steps":[{"op":"model","provider":"local","prompt":{"ref":"input","name":"query"},"bind":"a"},{"op":"final","value":{"ref":"var","name":"a"}}]}`

// TestChatStreamsTurnsOverARealClient: `rlmpl chat` against an in-process
// OpenAI-compatible server: each line is a managed turn (a planner call,
// then a streamed model step), the answer streams, /ledger and /receipt
// show the last turn, and each recorded request_sha256 is the SHA-256 of
// the body the server received.
func TestChatStreamsTurnsOverARealClient(t *testing.T) {
	srv := providertest.NewServer(
		providertest.Completion(plannerAnswer, 900, 40),
		providertest.SSE(`{"choices":[{"index":0,"delta":{"content":"Hello"}}]}`, `{"choices":[{"index":0,"delta":{"content":" there"}}]}`,
			`{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":2,"total_tokens":122}}`, "[DONE]"),
	)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	stdin := strings.NewReader("hi\n/ledger\n/receipt\n/quit\n")
	code := run(context.Background(), []string{"chat", "--state", t.TempDir(), "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06", "--max-context", "16000"}, stdin, &stdout, &stderr)
	out := stdout.String()
	if code != 0 || !strings.HasPrefix(out, "Hello there\n") || !strings.Contains(out, "plan_grammar") {
		t.Fatalf("chat: %d\n%s\n%s", code, out, stderr.String())
	}
	// /receipt: the turn completed with two calls, each hash that of the
	// body the server received, in order.
	reqs := srv.Requests()
	rest := out[strings.Index(out, "turn turn_"):]
	if !strings.Contains(rest, "  completed  ") || len(reqs) != 2 {
		t.Fatalf("receipt:\n%s\n%d requests", rest, len(reqs))
	}
	for i, r := range reqs {
		sum := sha256.Sum256([]byte(r.Raw))
		at := strings.Index(rest, hex.EncodeToString(sum[:]))
		if at < 0 {
			t.Fatalf("call %d: the SHA-256 of the body received is not in the receipt:\n%s", i, rest)
		}
		rest = rest[at:]
	}
	// The model step's request continues the conversation: it ends with the
	// user's message as the step's prompt.
	if !strings.Contains(reqs[1].Raw, `"content":"hi"}],"max_tokens"`) {
		t.Fatalf("model step body: %s", reqs[1].Raw)
	}
}

// TestChatJSONEvents: --json prints one event per line, ending with the
// answer.
func TestChatJSONEvents(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"done"}]}`, 10, 5))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--json", "--state", t.TempDir(), "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader("hello\n"), &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var kinds []string
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not NDJSON: %q", l)
		}
		kinds = append(kinds, e["event"].(string))
	}
	if code != 0 || kinds[0] != "started" || kinds[len(kinds)-1] != "answer" || !strings.Contains(stdout.String(), `"text":"done"`) {
		t.Fatalf("%d %v\n%s\n%s", code, kinds, stdout.String(), stderr.String())
	}
}

// TestReceiptCommands: after two turns, `receipt list` shows both,
// `receipt diff` names the units that entered, and `turn replay` renders
// each request again from the store, byte for byte.
func TestReceiptCommands(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	out := chatJSON(t, state, srv, "first\nsecond\n")
	var turns []string
	for _, l := range strings.Split(out, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil && e["event"] == "answer" {
			turns = append(turns, e["turn_id"].(string))
		}
	}
	if len(turns) != 2 {
		t.Fatalf("turns %v", turns)
	}
	out, _, code := rlmpl(t, "receipt", "list", "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, turns[0]) || !strings.Contains(out, "completed  1→2") || !strings.Contains(out, "3→4") {
		t.Fatalf("list: %d %s", code, out)
	}
	out, _, code = rlmpl(t, "receipt", "diff", turns[0], turns[1], "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "entered: conversation_message_3 (verbatim)") {
		t.Fatalf("diff: %d %s", code, out)
	}
	out, errs, code := rlmpl(t, "turn", "replay", turns[1], "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "1 requests rendered again from the store, byte for byte") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
	out, _, code = rlmpl(t, "receipt", "show", turns[1], "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "turn "+turns[1]+"  run 1  completed  messages 3→4") || !strings.Contains(out, "trajectory: planner ok, final ok") {
		t.Fatalf("show: %d %s", code, out)
	}
	out, _, code = rlmpl(t, "receipt", "show", turns[1], "--json", "--state", state, "--conv", "demo")
	var r struct {
		Calls []struct{ Recipe json.RawMessage }
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || len(r.Calls) != 1 || len(r.Calls[0].Recipe) == 0 {
		t.Fatalf("show --json: %d %v %s", code, err, out)
	}
	if _, errs, code := rlmpl(t, "receipt", "show", "nope", "--state", state, "--conv", "demo"); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("show missing: %d %s", code, errs)
	}
}

// TestChatRefusesABadConversationID: a conversation that cannot be created
// stops chat before the first turn, with the store's reason.
func TestChatRefusesABadConversationID(t *testing.T) {
	_, errs, code := rlmpl(t, "chat", "--state", t.TempDir(), "--conv", strings.Repeat("x", 2000), "--base-url", "http://127.0.0.1:1/v1")
	if code != 1 || !strings.Contains(errs, "id: longer than 1024 bytes") {
		t.Fatalf("chat: %d %q", code, errs)
	}
}

// TestChatChecksConfigurationBeforeWriting: a provider chat cannot use (no
// provider, a preset with no model, a key missing from the environment)
// stops chat with status 2 before the conversation is created or the line
// stored; a turn that fails at the server keeps the line and exits 1.
// Each error says its cause once.
func TestChatChecksConfigurationBeforeWriting(t *testing.T) {
	isolate(t)
	failing := providertest.NewServer(providertest.Reply(400, `{"error":{"message":"bad request"}}`))
	defer failing.Close()
	cases := []struct {
		name     string
		args     []string
		code     int
		stderr   string
		messages string // conv show's output; "" when the conversation must not exist
	}{
		{"no provider", nil, 2, "configuration_error (provider)", ""},
		{"no model", []string{"--provider", "openai"}, 2, "configuration_error (model)", ""},
		{"missing key", []string{"--provider", "openai", "--model", "gpt-4o"}, 2, "missing_credential: environment variable OPENAI_API_KEY is unset or empty", ""},
		{"failed turn", []string{"--base-url", failing.BaseURL(), "--model", "tiny"}, 1, "bad request", "[1] user: hi\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"chat", "--state", state, "--conv", "c"}, tc.args...), strings.NewReader("hi\n"), &stdout, &stderr)
			if code != tc.code || strings.Count(stderr.String(), tc.stderr) != 1 {
				t.Fatalf("chat: exit %d, stderr %q; want %d, %q once", code, stderr.String(), tc.code, tc.stderr)
			}
			if entries, _ := os.ReadDir(state); tc.messages == "" && len(entries) != 0 {
				t.Fatalf("a configuration error left %d entries in the state directory (%s...)", len(entries), entries[0].Name())
			}
			out, errs, _ := rlmpl(t, "conv", "show", "c", "--state", state)
			if out != tc.messages || tc.messages == "" && !strings.Contains(errs, "not found") {
				t.Fatalf("conv show: %q %q, want %q", out, errs, tc.messages)
			}
		})
	}
}

// TestChatEndsAPartialAnswerBeforeItsError: a stream that breaks after
// some text leaves that text on its own line, then the error.
func TestChatEndsAPartialAnswerBeforeItsError(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(plannerAnswer, 900, 40),
		providertest.RawSSE("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--state", t.TempDir(), "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06"}, strings.NewReader("hi\n"), &stdout, &stderr)
	if code != 1 || stdout.String() != "Hel\n" || stderr.Len() == 0 {
		t.Fatalf("chat: %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestChatDirect: `rlmpl chat --direct --max-context 2000` on a short
// conversation: no planner prompt, the model streams a history_search
// call in fragments, reads its result and streams the answer; both rounds
// are in the receipt and replay byte for byte.
func TestChatDirect(t *testing.T) {
	srv := providertest.NewServer(
		providertest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"history_search","arguments":"{\"query\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"hi\"}"}}]}}]}`,
			`{"choices":[{"index":0,"finish_reason":"tool_calls","delta":{}}],"usage":{"prompt_tokens":300,"completion_tokens":9,"total_tokens":309}}`, "[DONE]"),
		providertest.SSE(`{"choices":[{"index":0,"delta":{"content":"Found"}}]}`, `{"choices":[{"index":0,"delta":{"content":" it"}}]}`, "[DONE]"),
	)
	defer srv.Close()
	state := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--direct", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06", "--max-context", "2000"}, strings.NewReader("hi\n/receipt\n"), &stdout, &stderr)
	out := stdout.String()
	reqs := srv.Requests()
	if code != 0 || !strings.HasPrefix(out, "Found it\n") || len(reqs) != 2 {
		t.Fatalf("chat: %d, %d requests\n%s\n%s", code, len(reqs), out, stderr.String())
	}
	if strings.Contains(reqs[0].Raw, "plan_grammar") || strings.Contains(reqs[0].Raw, "A plan is a list") ||
		!strings.Contains(reqs[0].Raw, `"name":"history_search"`) {
		t.Fatalf("first request: %s", reqs[0].Raw)
	}
	if !strings.Contains(reqs[1].Raw, `"tool_call_id":"c1"`) || !strings.Contains(reqs[1].Raw, `"arguments":"{\"query\":\"hi\"}"`) {
		t.Fatalf("second request does not carry the call and its result: %s", reqs[1].Raw)
	}
	for _, r := range reqs {
		sum := sha256.Sum256([]byte(r.Raw))
		if !strings.Contains(out, hex.EncodeToString(sum[:])) {
			t.Fatalf("the receipt lacks the SHA-256 of a body received:\n%s", out)
		}
	}
	id := out[strings.Index(out, "turn turn_")+5:]
	id = id[:strings.IndexByte(id, ' ')]
	if out, errs, code := rlmpl(t, "turn", "replay", id, "--state", state, "--conv", "demo"); code != 0 || !strings.Contains(out, "2 requests rendered again") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
}

// chatJSON runs `rlmpl chat --json` on conversation demo of state against
// srv (provider local, model tiny), input being the user's lines, fails
// the test unless it exits 0, and returns its output.
func chatJSON(t *testing.T, state string, srv *providertest.Server, input string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"chat", "--json", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader(input), &stdout, &stderr); code != 0 {
		t.Fatalf("chat: %s", stderr.String())
	}
	return stdout.String()
}
