package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// TestE2ELlamaServer runs the completion family against a real
// llama.cpp llama-server (`make e2e` starts one with a tiny random-weight
// model carrying the real Llama 3 tokenizer and template; .ci/llama/):
// RLMPL_E2E_URL is its API root and RLMPL_E2E_DIR holds llama3.tiktoken
// and llama3.specials. It checks that (a) rlm_completion/4 gets a valid
// plan from a model that can only produce noise, because the planner
// request carries the plan's JSON schema; (b) llm_query/3 streams through
// on_delta; (c) a managed turn and a direct turn (history tools offered,
// the answer streamed) work; and (d) the local count of every request the
// server received equals its usage.prompt_tokens, exactly, where the
// count is labelled exact. Requests go through a recording proxy, so what is counted is
// byte for byte what was sent.
func TestE2ELlamaServer(t *testing.T) {
	base, dir := os.Getenv("RLMPL_E2E_URL"), os.Getenv("RLMPL_E2E_DIR")
	if base == "" || dir == "" {
		t.Skip("RLMPL_E2E_URL and RLMPL_E2E_DIR not set (make e2e sets them)")
	}
	rec := newRecorder(t, base)
	specials := readSpecials(t, filepath.Join(dir, "llama3.specials"))
	s := newSession(t, &host.Options{FS: os.DirFS(dir), Getenv: func(string) string { return "" }})
	ctx := context.Background()
	prov := fmt.Sprintf(`provider(llamacpp, [base_url(%q), model(tiny), timeout(120)])`, rec.URL+"/v1")
	err := s.Consult(ctx, "e2e.pl", `
:- dynamic(delta_/1).
collect_(D) :- assertz(delta_(D)).
text_(D, T) :- D = text(T).
`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Once(ctx, fmt.Sprintf(`token_register_encoding(llama3, 'llama3.tiktoken', [pattern(cl100k), specials(%s), chat_format(llama3)], ok(_))`, specials)); err != nil {
		t.Fatalf("register: %v", err)
	}

	// (a) A schema-forced plan: with no capability, the schema admits
	// exactly one final step whose value names no variable.
	got, err := s.Once(ctx, `rlm_completion("Answer from the context.", text("alpha\nbeta"), [provider(`+prov+`),
		capabilities([]), planner_max_tokens(384), planner_attempts(1), budget([max_total_tokens(4096), time_limit(300)])], O)`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got["O"], "ok(completion_result(") {
		t.Fatalf("rlm_completion = %s", got["O"])
	}
	t.Logf("schema-forced plan: %s", between(got["O"], "plan(", "),planner_attempts"))

	// (b) A streaming llm_query: the deltas add up to the answer.
	got, err = s.Once(ctx, `llm_query("Say hello.", [provider(`+prov+`), max_tokens(12), temperature(0), on_delta(collect_)], ok(R)),
		R = llm_result(F), memberchk(response(model_response(M)), F), memberchk(text(T), M),
		findall(X, (delta_(D), text_(D, X)), Xs), append(Xs, Joined),
		( Joined == T -> Same = true ; Same = false ),
		( delta_(usage(_)) -> Usage = true ; Usage = false ),
		findall(D, delta_(D), All), length(All, N)`)
	if err != nil {
		t.Fatal(err)
	}
	if got["Same"] != "true" || got["Usage"] != "true" || got["N"] == "0" {
		t.Fatalf("stream: deltas %s, joined = text: %s, usage delta: %s", got["N"], got["Same"], got["Usage"])
	}
	t.Logf("stream: %s deltas", got["N"])

	// A recursive subquery, a third kind of request.
	if _, err := s.Once(ctx, `rlm_query("What is in it?", text("gamma"), [provider(`+prov+`), max_tokens(8)], ok(_))`); err != nil {
		t.Fatal(err)
	}

	// A managed turn: its planner request is composed from the
	// conversation (several messages), and still counted exactly.
	got, err = s.Once(ctx, `conversation_store_open(memory, ok(S)), conversation_create(S, [], ok(C)),
		conversation_append(C, message(user, "Earlier question."), ok(_)),
		conversation_append(C, message(assistant, "Earlier answer."), ok(_)),
		conversation_turn(C, message(user, "Hello there."), [completion_options([provider(`+prov+`),
			capabilities([]), planner_max_tokens(384), planner_attempts(1)])], O)`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got["O"], "ok(") {
		t.Errorf("conversation_turn = %s", got["O"])
	}

	// A direct turn: the conversation goes to the model at once, with the
	// history tools offered (llama3's template renders none of them, so
	// the count stays exact), and the answer streams.
	got, err = s.Once(ctx, `conversation_store_open(memory, ok(S)), conversation_create(S, [], ok(C)),
		conversation_append(C, message(system, "You are terse."), ok(_)),
		conversation_append(C, message(user, "Earlier question."), ok(_)),
		conversation_append(C, message(assistant, "Earlier answer."), ok(_)),
		conversation_turn(C, message(user, "Answer directly."), [mode(direct), on_event(collect_),
			completion_options([provider(`+prov+`)])], O),
		( delta_(turn_event(F)), memberchk(kind(delta), F) -> Streamed = true ; Streamed = false )`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got["O"], "ok(") || got["Streamed"] != "true" {
		t.Errorf("direct conversation_turn = %s, streamed %s", got["O"], got["Streamed"])
	}

	// (d) Local count = server count, per request.
	enc := llama3(t, dir)
	reg, err := tokenizer.New(&tokenizer.Options{Encodings: []*tokenizer.Encoding{enc}})
	if err != nil {
		t.Fatal(err)
	}
	counter, err := reg.CounterForEncoding("llama3")
	if err != nil {
		t.Fatal(err)
	}
	calls := rec.calls()
	if len(calls) < 5 {
		t.Fatalf("%d requests recorded", len(calls))
	}
	for i, c := range calls {
		var req tokenizer.Request
		if err := json.Unmarshal(c.body, &req); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b := counter.CountRequest(&req)
		t.Logf("request %d (%s): local %d %s, server usage.prompt_tokens %d, difference %d",
			i, c.kind, b.Total.Tokens, b.Total.Method, c.promptTokens, b.Total.Tokens-c.promptTokens)
		if b.Total.Method != tokenizer.Exact {
			t.Errorf("request %d (%s) counted %v: every request here should be exact", i, c.kind, b.Total)
		}
		if c.promptTokens < 0 {
			t.Errorf("request %d (%s): the server reported no usage", i, c.kind)
		} else if b.Total.Tokens != c.promptTokens {
			t.Errorf("request %d (%s): local %d != server %d", i, c.kind, b.Total.Tokens, c.promptTokens)
		}
	}
}

// llama3 builds the Llama 3 encoding from the ranks file, as
// token_register_encoding/4 does.
func llama3(t *testing.T, dir string) *tokenizer.Encoding {
	f, err := os.Open(filepath.Join(dir, "llama3.tiktoken"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := tokenizer.NewEncoding(tokenizer.EncodingSpec{Name: "llama3", Ranks: f, Pattern: tokenizer.PatternCl100k, ChatFormat: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// readSpecials renders the specials file ("token id" lines) as a Prolog
// list of "token"-Id pairs.
func readSpecials(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		tok, id, _ := strings.Cut(line, " ")
		parts = append(parts, strconv.Quote(tok)+"-"+id)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	out, _, _ := strings.Cut(rest, to)
	return out
}

// recorder is a reverse proxy that keeps each request body and the
// prompt_tokens of its answer (the last usage of a stream). rewrite, when
// set, may replace an answer (given the request's body) before the
// client gets it; what is recorded is the server's usage.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	logs    []call
	rewrite func(body, resp []byte) []byte
}

type call struct {
	kind         string
	body         []byte
	promptTokens int // -1 when the answer had none
}

func newRecorder(t *testing.T, base string) *recorder {
	r := &recorder{}
	target := strings.TrimSuffix(base, "/v1")
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		out, err := http.NewRequestWithContext(req.Context(), req.Method, target+req.URL.Path, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		out.Header = req.Header.Clone()
		res, err := http.DefaultClient.Do(out)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer res.Body.Close()
		resp, _ := io.ReadAll(res.Body)
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		answer := resp
		if r.rewrite != nil {
			answer = r.rewrite(body, resp)
			w.Header().Del("Content-Length")
		}
		w.WriteHeader(res.StatusCode)
		w.Write(answer)
		kind := "model"
		switch {
		case bytes.Contains(body, []byte(`"response_format"`)) && bytes.Contains(body, []byte("Earlier answer")):
			kind = "turn planner (json_schema)"
		case bytes.Contains(body, []byte(`"response_format"`)):
			kind = "planner (json_schema)"
		case bytes.Contains(body, []byte(`"tools"`)):
			kind = "direct turn (tools, stream)"
		case bytes.Contains(body, []byte(`"stream":true`)):
			kind = "llm_query (stream)"
		case bytes.Contains(body, []byte("recursive subquery")):
			kind = "rlm_query"
		}
		r.mu.Lock()
		r.logs = append(r.logs, call{kind: kind, body: body, promptTokens: promptTokens(resp)})
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) calls() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.logs...)
}

// promptTokens reads usage.prompt_tokens from a JSON body or the last
// event of a stream that has one.
func promptTokens(body []byte) int {
	type usage struct {
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	n := -1
	var u usage
	if json.Unmarshal(body, &u) == nil && u.Usage != nil {
		return u.Usage.PromptTokens
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var u usage
		if json.Unmarshal([]byte(data), &u) == nil && u.Usage != nil {
			n = u.Usage.PromptTokens
		}
	}
	return n
}

// TestE2EMCPServer runs a real MCP server from npm over stdio
// (@modelcontextprotocol/server-everything, installed by `make e2e`:
// RLMPL_E2E_MCP is its command) in a direct turn against the real model
// server: the tool definitions are counted (exactly, with the model's
// tokenizer, and the server's usage agrees), a granted call reaches the
// MCP server, its result is stored and the turn replays — by its id, and
// byte for byte from its receipt. The tiny model's weights are random, so
// it cannot choose a tool: the proxy stands in for that choice only. The
// first round's request goes to llama-server as sent (it counts and
// answers it), and its answer is replaced by a call of the granted tool;
// everything else is real.
func TestE2EMCPServer(t *testing.T) {
	base, dir, bin := os.Getenv("RLMPL_E2E_URL"), os.Getenv("RLMPL_E2E_DIR"), os.Getenv("RLMPL_E2E_MCP")
	if base == "" || dir == "" || bin == "" {
		t.Skip("RLMPL_E2E_URL, RLMPL_E2E_DIR and RLMPL_E2E_MCP not set (make e2e sets them)")
	}
	const args = `{"message":"hello from rlmpl"}`
	rec := newRecorder(t, base)
	rec.rewrite = func(body, resp []byte) []byte {
		if !bytes.Contains(body, []byte(`"name":"everything__echo"`)) || bytes.Contains(body, []byte(`"tool_call_id"`)) {
			return resp
		}
		return toolCallAnswer(t, body, resp, "everything__echo", args)
	}
	logs := &records{}
	h, err := host.New(&host.Options{FS: os.DirFS(dir), StateDir: t.TempDir(), Environ: os.Environ(),
		Getenv: func(string) string { return "" }, Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	specials := readSpecials(t, filepath.Join(dir, "llama3.specials"))
	if _, err := s.Once(ctx, fmt.Sprintf(`token_register_encoding(llama3, 'llama3.tiktoken', [pattern(cl100k), specials(%s), chat_format(llama3)], ok(_))`, specials)); err != nil {
		t.Fatalf("register: %v", err)
	}
	if _, err := s.Once(ctx, fmt.Sprintf(`mcp_server(everything, [command(%q), args([stdio]), start_timeout(120)], ok(_))`, bin)); err != nil {
		t.Fatal(err)
	}
	// What the definitions cost: nothing under llama.cpp's Llama 3
	// template (it renders no tools; the server's usage below agrees),
	// and this much for an OpenAI model (estimated: OpenAI does not
	// publish its rendering).
	got, err := s.Once(ctx, `mcp_tools(everything, [encoding(llama3)], ok(L)), mcp_tools(everything, [model('gpt-4o')], ok(O)),
		findall(N-T, (member(mcp_tool(F), O), memberchk(name(N), F), memberchk(tokens(token_count(C)), F), memberchk(tokens(T), C)), Costs),
		findall(T, (member(mcp_tool(F), L), memberchk(tokens(token_count(C)), F), memberchk(tokens(T), C)), Zeros)`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server-everything's tools, tokens of each definition for gpt-4o: %s; for the Llama 3 template: %s", got["Costs"], got["Zeros"])
	if !strings.Contains(got["Costs"], "echo-") || strings.Trim(got["Zeros"], "[0,]") != "" {
		t.Fatalf("costs %s, llama3 %s", got["Costs"], got["Zeros"])
	}
	prov := fmt.Sprintf(`provider(llamacpp, [base_url(%q), model(tiny), timeout(120)])`, rec.URL+"/v1")
	turn := `conversation_turn(C, message(user, "Echo a greeting through the tool."), [mode(direct), turn_id(mcp1), mcp([everything-[echo]]),
			context_options([token_options([encoding(llama3)])]), completion_options([provider(` + prov + `), planner_max_tokens(48)])], O)`
	got, err = s.Once(ctx, `conversation_store_open(persist(e2e), ok(S)), conversation_create(S, [id(mcp)], ok(C)), `+turn+`,
		O = ok(conversation_turn_result(F)), memberchk(receipt(turn_receipt(R)), F), memberchk(mcp(M), R),
		conversation_messages(C, all, [], ok(Ms)), findall(Role-Text, (member(conversation_message(MF), Ms), memberchk(role(Role), MF), memberchk(content(Text), MF)), Stored)`)
	if err != nil {
		t.Fatal(err)
	}
	m := got["M"]
	t.Logf("receipt mcp: %s", m)
	if !strings.Contains(m, `server("everything")`) || !strings.Contains(m, `tools(["echo"])`) || !strings.Contains(m, `definition_tokens(0),method("exact")`) ||
		!strings.Contains(m, `tool("echo")`) || !strings.Contains(m, `status("ok")`) {
		t.Fatalf("receipt mcp = %s", m)
	}
	if !strings.Contains(got["Stored"], `tool-"Echo: hello from rlmpl"`) {
		t.Fatalf("stored = %s", got["Stored"])
	}
	calls := rec.calls()
	if len(calls) != 2 || !bytes.Contains(calls[1].body, []byte(`"content":"Echo: hello from rlmpl"`)) {
		t.Fatalf("%d requests; the second should carry the MCP server's answer", len(calls))
	}
	counter := llama3Counter(t, dir)
	for i, c := range calls {
		var req tokenizer.Request
		if err := json.Unmarshal(c.body, &req); err != nil {
			t.Fatal(err)
		}
		b := counter.CountRequest(&req)
		t.Logf("round %d: %d tools offered, local %d %s, server usage.prompt_tokens %d", i+1, len(req.Tools), b.Total.Tokens, b.Total.Method, c.promptTokens)
		if b.Total.Method != tokenizer.Exact || b.Total.Tokens != c.promptTokens {
			t.Errorf("round %d: local %v, server %d", i+1, b.Total, c.promptTokens)
		}
	}
	// The same turn id replays the stored result without a request; the
	// receipt renders both requests again byte for byte.
	got, err = s.Once(ctx, `conversation_store_open(persist(e2e), ok(S)), conversation_open(S, mcp, ok(C)), `+turn+`,
		O = ok(conversation_turn_result(F)), memberchk(replayed(Replayed), F)`)
	if err != nil || got["Replayed"] != "true" || len(rec.calls()) != 2 {
		t.Fatalf("replay by id: %v %v, %d requests", got, err, len(rec.calls()))
	}
	st, err := h.Runtime().OpenStore(runtime.StoreSpec{Dir: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := st.Conversation("mcp").Replay(ctx, "mcp1")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	for i, b := range bodies {
		if !slices.ContainsFunc(calls, func(c call) bool { return bytes.Equal(c.body, b) }) {
			t.Errorf("replayed request %d is none the server received", i+1)
		}
	}
	if !logs.has("mcp server stderr", "everything") {
		t.Errorf("the server's stderr did not reach the log: %v", logs.all())
	}
}

// toolCallAnswer is the server's answer to a chat request (a stream or
// not) with its text replaced by one call of fn: the usage the server
// reported is kept.
func toolCallAnswer(t *testing.T, body, resp []byte, fn, args string) []byte {
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}`, promptTokens(resp), promptTokens(resp)+1)
	call := fmt.Sprintf(`{"index":0,"id":"e2e_call_1","type":"function","function":{"name":%q,"arguments":%q}}`, fn, args)
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		return []byte(`{"id":"e2e","object":"chat.completion","model":"tiny","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[` +
			call + `]}}],"usage":` + usage + `}`)
	}
	return []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[" + call + "]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"finish_reason\":\"tool_calls\",\"delta\":{}}],\"usage\":" + usage + "}\n\ndata: [DONE]\n\n")
}

// llama3Counter counts with the Llama 3 encoding and chat format.
func llama3Counter(t *testing.T, dir string) tokenizer.Counter {
	reg, err := tokenizer.New(&tokenizer.Options{Encodings: []*tokenizer.Encoding{llama3(t, dir)}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := reg.CounterForEncoding("llama3")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// records keeps log records as text.
type records struct {
	mu    sync.Mutex
	lines []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.Key + "=" + a.Value.String()
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) has(subs ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func (r *records) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}
