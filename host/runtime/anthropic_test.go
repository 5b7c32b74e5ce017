package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// anthropicServer serves a scripted Anthropic Messages server on loopback
// and returns it with a client of it ("claude-test", key in the fake
// environment).
func anthropicServer(t *testing.T, opts providertest.AnthropicOptions) (*providertest.Anthropic, *providertest.Server, *provider.Client) {
	t.Helper()
	a := providertest.NewAnthropic(opts)
	srv := providertest.NewServer(a.ServeHTTP)
	t.Cleanup(srv.Close)
	p, err := provider.NewClient(&provider.Options{API: provider.APIAnthropic, BaseURL: srv.BaseURL(), Model: "claude-test",
		Credential: "ANTHROPIC_API_KEY", Getenv: func(string) string { return "sk-ant-test" }, RetryBaseDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	return a, srv, p
}

// clientModels answers a plan's model calls with a provider client, as the
// host's models do: streaming when the call takes deltas.
type clientModels struct{ p *provider.Client }

func (m clientModels) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	var resp provider.Response
	var err error
	if call.OnDelta != nil {
		resp, err = m.p.Stream(ctx, call.Request, func(d provider.Delta) error {
			if d.Kind == provider.DeltaText {
				call.OnDelta(d.Text)
			}
			return nil
		})
	} else {
		resp, err = m.p.Complete(ctx, call.Request)
	}
	return plan.ModelResult{Text: resp.Content, Reasoning: resp.Reasoning, ReasoningSignature: resp.ReasoningSignature, Model: resp.Model, ToolCalls: resp.ToolCalls,
		Usage: plan.Usage(resp.Usage), FinishReason: resp.FinishReason, RequestBody: resp.RequestBody}, err
}

// cacheMarks lists, for a Messages body, where its cache_control marks
// are: "system:N" for the Nth system block, "ROLE:TEXT" for a message
// block (its text, or its type).
func cacheMarks(t *testing.T, raw string) []string {
	t.Helper()
	var b struct {
		System []map[string]any `json:"system"`
		Msgs   []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, bl := range b.System {
		if bl["cache_control"] != nil {
			out = append(out, fmt.Sprintf("system:%d", i))
		}
	}
	for _, m := range b.Msgs {
		for _, bl := range m.Content {
			if bl["cache_control"] == nil {
				continue
			}
			what, _ := bl["text"].(string)
			if what == "" {
				what, _ = bl["type"].(string)
			}
			out = append(out, m.Role+":"+what)
		}
	}
	return out
}

func sum(raw string) string {
	s := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(s[:])
}

// TestAnthropicPlannerTurns: managed planner turns over the Messages API.
// Each receipt call names the dialect and hashes the bytes the server
// received, and replay renders them again; the breakpoints mark the end
// of the fixed sections, the prefix the previous request wrote and the
// end of the conversation; the receipt keeps the cache reads and writes
// the server reported, and the cost prices the writes at cache_write.
func TestAnthropicPlannerTurns(t *testing.T) {
	// A short conversation: the prefixes are cached from 256 tokens.
	a, srv, p := anthropicServer(t, providertest.AnthropicOptions{MinCacheTokens: 256, Reply: func(int, map[string]any) providertest.AnthropicReply {
		return providertest.AnthropicReply{Text: final("noted"), OutputTokens: 9}
	}})
	price := provider.Price{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}
	c := memConvWith(t, &Options{Prices: provider.Prices{"claude-test": price}})
	opts := turnOpts(httpPlanner{p}, handle.New(nil))
	opts.Pack.Policy.Window = pack.Stable
	opts.Pack.Sections = []pack.TextSection{{Name: "system_prompt", Visibility: pack.Model, Text: "You keep notes on the lease path."}}
	questions := []string{"the lease renewal took 412 ms", "and the deploy plan waits for it", "what did I say first?"}
	for i, q := range questions {
		res, err := c.Turn(context.Background(), user(q), opts)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		received := srv.Requests()[i]
		call := res.Receipt.Calls[0]
		if len(res.Receipt.Calls) != 1 || call.Dialect != "anthropic" || call.RequestSHA256 != sum(received.Raw) || received.Path != "/v1/messages" {
			t.Fatalf("turn %d: calls %+v; the server received %s at %s", i+1, res.Receipt.Calls, sum(received.Raw), received.Path)
		}
		bodies, err := c.Replay(context.Background(), res.TurnID)
		if err != nil || len(bodies) != 1 || string(bodies[0]) != received.Raw {
			t.Fatalf("turn %d: replay %v:\n%s\nreceived\n%s", i+1, err, bodies, received.Raw)
		}
		// The fixed sections end with the sixth system block: the planner's
		// instructions and grammar, the system prompt, then what this
		// completion fixes (capabilities, tools, budget).
		marks := cacheMarks(t, received.Raw)
		want := []string{"system:5"}
		if i > 0 {
			want = append(want, "user:"+questions[i-1]) // where the previous request ended its conversation
		}
		want = append(want, "user:"+q)
		if strings.Join(marks, " | ") != strings.Join(want, " | ") {
			t.Errorf("turn %d: cache_control on %q, want %q", i+1, marks, want)
		}
		u := a.Usages()[i]
		if *call.ProviderPromptTokens != u.Prompt() || *call.CachedTokens != u.CacheRead || *call.CacheWriteTokens != u.CacheWrite {
			t.Errorf("turn %d: receipt prompt %d cached %d written %d, server %+v", i+1, *call.ProviderPromptTokens, *call.CachedTokens, *call.CacheWriteTokens, u)
		}
		if i > 0 && u.CacheRead == 0 {
			t.Errorf("turn %d read nothing from the cache: %+v", i+1, u)
		}
		cost := (float64(u.Input)*price.Input + float64(u.CacheRead)*price.CachedInput + float64(u.CacheWrite)*price.CacheWrite + 9*price.Output) / 1e6
		if call.CostUSD == nil || math.Abs(*call.CostUSD-cost) > 1e-12 || call.CostSource != CostPriceTable {
			t.Errorf("turn %d: cost %v (%s), want %v", i+1, call.CostUSD, call.CostSource, cost)
		}
	}
}

// TestAnthropicDirectTurn: a direct turn streams over the Messages API
// with native tools: the model's tool_use (its input streamed as
// input_json_delta, after a thinking block) runs history_search, the next
// round sends the signed thinking and the call in one assistant turn and
// the result in one user turn, marked for the cache at its end, replay
// renders it again, and the streamed answer is stored with the calls.
func TestAnthropicDirectTurn(t *testing.T) {
	_, srv, p := anthropicServer(t, providertest.AnthropicOptions{Reply: func(call int, _ map[string]any) providertest.AnthropicReply {
		if call == 0 {
			return providertest.AnthropicReply{Thinking: "The code is older than the window: search.",
				ToolUses: []providertest.ToolUse{{ID: "toolu_1", Name: "history_search", Input: `{"query":"vault code","max_results":1}`}}}
		}
		return providertest.AnthropicReply{Text: "It is ZEPHYR-4471."}
	}})
	c := longConv(t)
	opts := directOpts(clientModels{p}, handle.New(nil), 2000)
	opts.Pack.Policy.Window = pack.Stable
	var deltas []string
	opts.OnEvent = func(ev TurnEvent) {
		if ev.Kind == "delta" {
			deltas = append(deltas, ev.Text)
		}
	}
	res, err := c.Turn(context.Background(), user("remind me of the vault code"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Assistant.Message.Content.PlainText() != "It is ZEPHYR-4471." || len(deltas) != 2 || strings.Join(deltas, "") != "It is ZEPHYR-4471." {
		t.Fatalf("answer %q, deltas %q", res.Assistant.Message.Content.PlainText(), deltas)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.HasSuffix(reqs[0].Raw, `"stream":true}`) {
		t.Fatalf("%d requests: %s", len(reqs), reqs[0].Raw)
	}
	var second struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(reqs[1].Raw), &second); err != nil {
		t.Fatal(err)
	}
	if len(second.Tools) != 3 || second.Tools[0].Name != "history_search" || len(second.Tools[0].InputSchema) == 0 {
		t.Errorf("tools = %+v", second.Tools)
	}
	n := len(second.Messages)
	call, result := second.Messages[n-2], second.Messages[n-1]
	if call.Role != "assistant" || call.Content[0]["type"] != "thinking" || call.Content[0]["signature"] != "sig" ||
		call.Content[1]["type"] != "tool_use" || call.Content[1]["id"] != "toolu_1" ||
		result.Role != "user" || result.Content[len(result.Content)-1]["type"] != "tool_result" || result.Content[len(result.Content)-1]["tool_use_id"] != "toolu_1" {
		t.Fatalf("the last round ends with %+v then %+v", call, result)
	}
	if m := cacheMarks(t, reqs[1].Raw); m[len(m)-1] != "user:tool_result" {
		t.Errorf("cache marks %q: the round's end is not marked", m)
	}
	for i, rc := range res.Receipt.Calls {
		if rc.Kind != "respond" || rc.Dialect != "anthropic" || rc.RequestSHA256 != sum(reqs[i].Raw) || !rc.Recipe.Stream {
			t.Errorf("call %d = %+v", i+1, rc)
		}
	}
	if bodies, err := c.Replay(context.Background(), res.TurnID); err != nil || string(bodies[1]) != reqs[1].Raw {
		t.Fatalf("replay: %v", err)
	}
	// The next turn's first round repeats this one's up to its question:
	// the receipt predicts that prefix, and it is marked.
	next, err := c.Turn(context.Background(), user("thanks"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if next.Receipt.CachePrefixTokens == 0 || !slices.Contains(cacheMarks(t, srv.Requests()[2].Raw), "user:remind me of the vault code") {
		t.Errorf("next turn: predicted prefix %d, cache marks %q", next.Receipt.CachePrefixTokens, cacheMarks(t, srv.Requests()[2].Raw))
	}
}

// estimateOver counts a text at ratio times the estimator: a provider
// whose tokenizer counts more than the estimate.
func estimateOver(ratio float64) func(string) int {
	return func(s string) int { return int(math.Ceil(ratio * float64(tokenizer.Estimate(s).Tokens))) }
}

// TestCalibrationAfterRefusal: against a provider whose counts run 25%
// over the estimator's, a turn packed to the ceiling is refused as too
// long: the turn fails as context_length_exceeded (the user message
// stays), the refusal calibrates the provider, and the same turn run
// again fits, counted as calibrated. The calibration is in the state
// directory: a new runtime there packs with it.
func TestCalibrationAfterRefusal(t *testing.T) {
	const window = 4000
	a, srv, p := anthropicServer(t, providertest.AnthropicOptions{Window: window, Count: estimateOver(1.25), Reply: func(int, map[string]any) providertest.AnthropicReply {
		return providertest.AnthropicReply{Text: final("noted")}
	}})
	dir := t.TempDir()
	c := convOn(t, StoreSpec{Memory: true}, &Options{StateDir: dir}, longHistory(40)...)
	opts := turnOpts(httpPlanner{p}, handle.New(nil))
	opts.Pack.Model = "claude-test" // no known tokenizer: the estimator
	opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens, opts.Pack.Policy.ReserveOutputTokens = window, window, 256
	opts.TurnID = "t1"
	_, err := c.Turn(context.Background(), user("what did the lease renewal take?"), opts)
	var te *TurnError
	var pe *provider.Error
	if !errors.As(err, &te) || te.Kind != KindContextLengthExceeded || !errors.As(err, &pe) || pe.PromptTokens <= window || te.Receipt == nil {
		t.Fatalf("first run: %v, want a context_length_exceeded turn with the provider's count", err)
	}
	k := c.st.rt.Calibration("local", "claude-test")
	if k == nil || k.Samples != 1 || k.Ratio < 1.15 || k.Ratio > 1.3 {
		t.Fatalf("calibration after the refusal = %+v, want one sample near 1.25", k)
	}
	res, err := c.Turn(context.Background(), user("what did the lease renewal take?"), opts)
	if err != nil {
		t.Fatalf("the same turn again: %v", err)
	}
	call := res.Receipt.Calls[0]
	if res.Receipt.Counter.Method != MethodCalibrated || call.Method != MethodCalibrated || call.Calibration == nil ||
		*call.ProviderPromptTokens > window-256 || int64(call.LocalPromptTokens) > window {
		t.Fatalf("retry: counter %+v, call %+v (provider %d)", res.Receipt.Counter, call, *call.ProviderPromptTokens)
	}
	if got := len(srv.Requests()); got != 2 || len(a.Usages()) != 1 {
		t.Fatalf("%d requests, %d answered; want the refused one and the retry", got, len(a.Usages()))
	}
	// The calibration outlives the runtime.
	rt2, err := New(&Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if k2 := rt2.Calibration("local", "claude-test"); k2 == nil || k2.Samples != 2 {
		t.Fatalf("a new runtime's calibration = %+v, want the 2 samples", k2)
	}
}

// longHistory is n exchanges of some 90 tokens each.
func longHistory(n int) []store.Message {
	var msgs []store.Message
	for i := range n {
		msgs = append(msgs, user(fmt.Sprintf("note %d: node-%d renewed its lease in %d ms while the deploy plan %d waited on the queue", i, i%7, 300+i, i)),
			store.Message{Role: store.RoleAssistant, Content: store.TextContent(fmt.Sprintf("noted %d: lease renewal at %d ms, deploy plan %d queued", i, 300+i, i))})
	}
	return msgs
}
