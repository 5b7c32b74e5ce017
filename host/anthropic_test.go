package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// anthropicSession is a session whose programs reach a scripted Anthropic
// server as provider(provider(claude, [api(anthropic), ...])), the
// settings resolved as for any configured provider.
func anthropicSession(t *testing.T, opts providertest.AnthropicOptions, first ...string) (*host.Session, *providertest.Server, string) {
	t.Helper()
	a := providertest.NewAnthropic(opts)
	srv := providertest.NewServer(a.ServeHTTP)
	t.Cleanup(srv.Close)
	prov := `provider(claude, [api(anthropic), base_url("` + srv.BaseURL() + `"), credential(env('CLAUDE_KEY')), model("claude-test"), cache_ttl("1h")])`
	s := newSession(t, &host.Options{StateDir: t.TempDir(), Getenv: func(k string) string {
		if k == "CLAUDE_KEY" {
			return "sk-ant-secret-value"
		}
		return ""
	}})
	return s, srv, prov
}

// TestCompletionOverAnthropic: rlm_completion/4 with a planner and a model
// step over the Messages API: each request goes to /v1/messages with
// x-api-key, and the answer is the model step's.
func TestCompletionOverAnthropic(t *testing.T) {
	s, srv, prov := anthropicSession(t, providertest.AnthropicOptions{Reply: func(call int, _ map[string]any) providertest.AnthropicReply {
		if call == 0 {
			return providertest.AnthropicReply{Text: `{"steps":[{"op":"model","provider":"claude","prompt":"summarize","bind":"s"},{"op":"final","value":{"ref":"var","name":"s"}}]}`}
		}
		return providertest.AnthropicReply{Text: "a summary"}
	}})
	got, err := s.Once(context.Background(), `rlm_completion("summarize the context", text("a long document"), [provider(`+prov+`)], ok(R)),
		R = completion_result(P), memberchk(value(model_response(VP)), P), memberchk(text(T), VP), atom_chars(V, T)`)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got["V"] != "'a summary'" || len(reqs) != 2 {
		t.Fatalf("value %s after %d requests", got["V"], len(reqs))
	}
	for _, r := range reqs {
		if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "sk-ant-secret-value" || r.Header.Get("Authorization") != "" || r.Body["max_tokens"] == nil {
			t.Errorf("request to %s, headers %v: %s", r.Path, r.Header, r.Raw)
		}
	}
}

// TestTurnOverAnthropic: a direct conversation_turn/4 over the Messages
// API answers; a turn whose request the provider refuses as too long is
// error(conversation_error([detail(context_length_exceeded(
// provider_error([... kind(context_length_exceeded) ...]))) ...])), and the
// same turn run again (its turn_id) fits, the refusal having calibrated
// the estimate.
func TestTurnOverAnthropic(t *testing.T) {
	s, _, prov := anthropicSession(t, providertest.AnthropicOptions{Window: 3000, Count: func(s string) int { return len(s) / 2 }})
	ctx := context.Background()
	got, err := s.Once(ctx, `conversation_store_open(memory, ok(S)), conversation_create(S, [id(c)], ok(C)),
		forall(between(1, 60, I), (format(atom(Q), "note ~w: node-~w renewed its lease while the deploy waited", [I, I]),
			conversation_append(C, message(user, Q), ok(_)), conversation_append(C, message(assistant, "noted"), ok(_)))),
		Opts = [mode(direct), turn_id(t1), completion_options([provider(`+prov+`)]), context_options([token_options([model('claude-test')]),
			policy([max_context_tokens(3000), provider_context_tokens(3000), reserve_output_tokens(200), safety_margin_tokens(0), min_recent_turns(2)])])],
		conversation_turn(C, message(user, "what did node-7 do?"), Opts, First),
		conversation_turn(C, message(user, "what did node-7 do?"), Opts, Second)`)
	if err != nil {
		t.Fatal(err)
	}
	if first := got["First"]; !strings.Contains(first, "detail(context_length_exceeded(provider_error(") || !strings.Contains(first, "kind(context_length_exceeded)") {
		t.Fatalf("first run = %.600s", first)
	}
	if !strings.HasPrefix(got["Second"], "ok(") {
		t.Fatalf("second run = %.600s", got["Second"])
	}
}
