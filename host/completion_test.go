package host_test

import (
	"context"
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
	p, err := provider.NewOpenAI(&provider.Options{BaseURL: srv.BaseURL(), Model: "tiny", Credential: "RLMPL_TEST_KEY",
		Getenv: func(k string) string {
			if k == "RLMPL_TEST_KEY" {
				return "sk-secret-value"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{Providers: map[string]provider.Provider{"local": p}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
	p, _ := provider.NewOpenAI(&provider.Options{BaseURL: srv.BaseURL(), Model: "tiny", Credential: "K",
		Getenv: func(string) string { return "sk-secret-value" }})
	h, _ := host.New(&host.Options{Providers: map[string]provider.Provider{"local": p}})
	ctx := context.Background()
	s, _ := h.NewSession(ctx)
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
	h, _ := host.New(nil)
	s, _ := h.NewSession(context.Background())
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
