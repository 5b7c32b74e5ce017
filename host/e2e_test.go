package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/host"
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
// prompt_tokens of its answer (the last usage of a stream).
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	logs []call
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
		w.WriteHeader(res.StatusCode)
		w.Write(resp)
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
