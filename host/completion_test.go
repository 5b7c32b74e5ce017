package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestCompletionOverHTTP runs rlm_completion/4 end to end with a real HTTP
// provider client against an in-process OpenAI-compatible server: the
// planner answers in prose around a JSON plan, a model step is served by
// the same endpoint, and the credential comes from Getenv at request time.
func TestCompletionOverHTTP(t *testing.T) {
	srv := providertest.NewServer(
		providertest.Completion("Sure. {\"steps\":[{\"op\":\"model\",\"provider\":\"local\",\"prompt\":\"summarize\",\"bind\":\"s\"},{\"op\":\"final\",\"value\":{\"ref\":\"var\",\"name\":\"s\"}}]}", 50, 20),
		providertest.Completion("a summary", 7, 3),
	)
	defer srv.Close()
	p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "tiny", Credential: "RLMPL_TEST_KEY",
		Getenv: func(k string) string {
			if k == "RLMPL_TEST_KEY" {
				return "sk-secret-value"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, &host.Options{Providers: map[string]provider.Provider{"local": p}})
	ctx := context.Background()
	got, err := s.Once(ctx, `rlm_completion("summarize the context", text("a long document"), [provider(local)], ok(R)),
		R = completion_result(P), memberchk(value(model_response(VP)), P), memberchk(text(T), VP),
		atom_chars(V, T), memberchk(usage(U), P)`)
	if err != nil {
		t.Fatal(err)
	}
	if got["V"] != "'a summary'" || !strings.Contains(got["U"], "total_tokens(80)") || !strings.Contains(got["U"], "tokens_known(true)") {
		t.Fatalf("value %s usage %s", got["V"], got["U"])
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	planner := reqs[0].Raw
	if !strings.Contains(planner, "summarize the context") || strings.Contains(planner, "a long document") {
		t.Fatalf("the planner must see the goal and not the payload: %s", planner)
	}
	if reqs[0].Header.Get("Authorization") != "Bearer sk-secret-value" {
		t.Fatalf("credential not sent")
	}
}

// TestCompletionProviderErrorIsStructured: a 401 with a provider error body
// becomes an error outcome that names it, and the key never appears.
func TestCompletionProviderErrorIsStructured(t *testing.T) {
	srv := providertest.NewServer(providertest.Reply(401, `{"error":{"message":"bad key sk-secret-value","type":"auth","code":"invalid_api_key"}}`))
	defer srv.Close()
	p, _ := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "tiny", Credential: "K",
		Getenv: func(string) string { return "sk-secret-value" }})
	s := newSession(t, &host.Options{Providers: map[string]provider.Provider{"local": p}})
	ctx := context.Background()
	got, err := s.Once(ctx, `rlm_completion("q", text("c"), [provider(local)], error(E))`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got["E"], "sk-secret-value") || !strings.Contains(got["E"], "planner") {
		t.Fatalf("E = %s", got["E"])
	}
}

// TestBoundaryTeachesValidPlanSteps: the retrieval forms the cold-history
// boundary shows the model parse as plan steps in both syntaxes.
func TestBoundaryTeachesValidPlanSteps(t *testing.T) {
	s := newSession(t, nil)
	got, err := s.Once(context.Background(), `context_boundary_template(T), atom_chars(A, T)`)
	if err != nil {
		t.Fatal(err)
	}
	text := got["A"]
	term := `context(input(context), search("query"), r)`
	js := `{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"query"},"bind":"r"}`
	if !strings.Contains(text, term) || !strings.Contains(text, js) {
		t.Fatalf("boundary text lacks the forms: %s", text)
	}
	if _, err := plan.ParseTerm("plan(["+term+", final(var(r))])", planterm.Reader{}); err != nil {
		t.Fatalf("term form: %v", err)
	}
	if _, err := plan.ParseJSON(`{"steps":[` + js + `,{"op":"final","value":{"ref":"var","name":"r"}}]}`); err != nil {
		t.Fatalf("JSON form: %v", err)
	}
}

// TestStructuredPlanRequests: a provider that supports structured output
// (the llamacpp preset) gets planner requests whose response_format is the
// plan schema of the call's capabilities; one that does not (a bare
// openai_compatible server) gets none, unless its settings turn it on.
func TestStructuredPlanRequests(t *testing.T) {
	plan := `{"steps":[{"op":"final","value":"ok"}]}`
	for _, tc := range []struct {
		name, provider string
		schema         bool
	}{
		{"preset that constrains sampling", "provider(llamacpp, [base_url(%q)])", true},
		{"unknown server", "provider(mine, [base_url(%q)])", false},
		{"unknown server, turned on", "provider(mine, [base_url(%q), structured_output(true)])", true},
		{"preset, turned off", "provider(llamacpp, [base_url(%q), structured_output(false)])", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewServer(providertest.Completion(plan, 1, 1))
			defer srv.Close()
			s := newSession(t, nil)
			goal := fmt.Sprintf(`rlm_completion("q", text("c"), [provider(`+tc.provider+`), capabilities([context(search)])], ok(_))`, srv.BaseURL())
			if _, err := s.Once(context.Background(), goal); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].Body
			rf, has := body["response_format"].(map[string]any)
			if has != tc.schema {
				t.Fatalf("response_format present = %v, want %v", has, tc.schema)
			}
			if has {
				js, _ := json.Marshal(rf)
				if !strings.Contains(string(js), `"json_schema"`) || !strings.Contains(string(js), `"search"`) || strings.Contains(string(js), `"slice"`) {
					t.Errorf("schema does not follow the capabilities: %s", js)
				}
			}
		})
	}
}

// TestLLMQueryStreams: on_delta makes llm_query/3 stream, and the closure
// sees each delta in order, usage included.
func TestLLMQueryStreams(t *testing.T) {
	srv := providertest.NewServer(providertest.SSE(
		`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`,
		"[DONE]"))
	defer srv.Close()
	s := newSession(t, nil)
	ctx := context.Background()
	if err := s.Consult(ctx, "d.pl", ":- dynamic(seen_/1).\nsee_(D) :- assertz(seen_(D)).\nnever_(_) :- fail.\n"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Once(ctx, fmt.Sprintf(`llm_query("hi", [provider(provider(local, [base_url(%q)])), on_delta(see_)], ok(_)), findall(D, seen_(D), Ds)`, srv.BaseURL()))
	if err != nil {
		t.Fatal(err)
	}
	want := `[text("Hel"),text("lo"),finish(stop),usage(usage([completion_tokens(2),prompt_tokens(4),total_tokens(6)]))]`
	if got["Ds"] != want {
		t.Errorf("deltas = %s\nwant %s", got["Ds"], want)
	}
	if b := srv.Requests()[0].Body; b["stream"] != true {
		t.Errorf("not a stream request: %v", b)
	}
	// A closure that fails stops the stream: an outcome, not an exception.
	got, err = s.Once(ctx, fmt.Sprintf(`llm_query("hi", [provider(provider(local, [base_url(%q)])), on_delta(never_)], error(E))`, srv.BaseURL()))
	if err != nil || !strings.Contains(got["E"], "handler_failed") {
		t.Errorf("failing closure: %v %v", got, err)
	}
}

// TestKeysStayOutOfTrajectories: a server that echoes the key in an error
// body during a plan's model step leaves no trace of it in the outcome,
// the trajectory included.
func TestKeysStayOutOfTrajectories(t *testing.T) {
	const key = "sk-traj-SECRET-0a9b8c7d"
	srv := providertest.NewServer(
		providertest.Completion(`{"steps":[{"op":"model","provider":"local","prompt":"x","bind":"m"},{"op":"final","value":{"ref":"var","name":"m"}}]}`, 1, 1),
		providertest.Reply(400, `{"error":{"message":"bad key `+key+`"}}`))
	defer srv.Close()
	s := newSession(t, &host.Options{Getenv: func(v string) string {
		if v == "LOCAL_KEY" {
			return key
		}
		return ""
	}})
	ctx := context.Background()
	got, err := s.Once(ctx, fmt.Sprintf(`rlm_completion("q", text("c"), [provider(provider(local, [base_url(%q), credential(env('LOCAL_KEY'))]))], O)`, srv.BaseURL()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got["O"], key) || !strings.Contains(got["O"], "error(") {
		t.Fatalf("outcome = %s", got["O"])
	}
	if srv.Requests()[1].Header.Get("Authorization") != "Bearer "+key {
		t.Fatal("the key was not sent")
	}
}

// TestHostProviderForGoCallers: Host.Provider resolves for Go callers (the
// managed turn, the CLI) by the same rules, the default included.
func TestHostProviderForGoCallers(t *testing.T) {
	cfg, err := provider.ParseConfig("p.toml", []byte("default = \"local\"\n[providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := host.New(&host.Options{ProviderConfig: cfg})
	r, err := h.Provider(context.Background(), "", provider.Settings{})
	if err != nil || r.Name != "local" || r.StructuredOutput {
		t.Fatalf("default = %+v, %v", r, err)
	}
	h, _ = host.New(nil)
	if _, err := h.Provider(context.Background(), "", provider.Settings{}); err == nil || !strings.Contains(err.Error(), "no provider configured") {
		t.Fatalf("nothing configured: %v", err)
	}
}

// TestCompletionUsageIsPriced: with a price table in the provider
// configuration, rlm_completion/4's usage record carries the calls' cost
// (cost_known(true)), the figure a program's spend report reads.
func TestCompletionUsageIsPriced(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"done"}]}`, 1000, 50))
	defer srv.Close()
	cfg, err := provider.ParseConfig("p.toml", []byte("[providers.local]\nbase_url = \""+srv.BaseURL()+"\"\nmodel = \"tiny\"\n[prices.tiny]\ninput = 2.0\noutput = 8.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, &host.Options{ProviderConfig: cfg})
	got, err := s.Once(context.Background(), `rlm_completion("q", text("ctx"), [provider(local)], ok(R)),
		R = completion_result(P), memberchk(usage(usage_summary(U)), P), memberchk(cost_known(K), U), memberchk(cost_usd(C), U)`)
	if err != nil {
		t.Fatal(err)
	}
	if got["K"] != "true" || got["C"] != "0.0024" { // 1000×$2 + 50×$8 per million
		t.Fatalf("usage cost_known(%s) cost_usd(%s), want true and 0.0024", got["K"], got["C"])
	}
}
