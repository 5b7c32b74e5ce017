package plan

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// respondScript answers each respond round with the next reply and keeps
// every request it saw.
type respondScript struct {
	mu      sync.Mutex
	replies []ModelResult
	seen    []tokenizer.Request
}

func (s *respondScript) Complete(_ context.Context, call ModelCall) (ModelResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, call.Request)
	if !call.Respond {
		return ModelResult{}, context.DeadlineExceeded
	}
	i := min(len(s.seen), len(s.replies)) - 1
	r := s.replies[i]
	r.Usage = tokens(5, 1)
	return r, nil
}

func call(id, name, args string) tokenizer.ToolCall {
	return tokenizer.ToolCall{ID: id, Type: "function", Function: tokenizer.FunctionCall{Name: name, Arguments: args}}
}

func toolNamesOf(req tokenizer.Request) string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	return strings.Join(names, ",")
}

func TestRespondToolLoop(t *testing.T) {
	e := newEnv(t, needles)
	m := &respondScript{replies: []ModelResult{
		{ToolCalls: []tokenizer.ToolCall{
			call("c1", "history_search", `{"query":"needle","max_results":1}`),
			call("c2", "rm_rf", `{}`),                        // not granted
			call("c3", "history_peek", `{"sequence":"two"}`), // breaks the schema
			call("c4", "history_slice", `not json`),          // malformed
			call("c5", "count_items", `{"items":[1,2]}`),     // granted, fails in the handler
		}},
		{Text: "two needles"},
	}}
	in := e.input("how many needles?")
	in.Plan = DirectPlan("openrouter")
	in.Capabilities = append(in.Capabilities, MustCapabilities("tool(count_items)")...)
	in.Tools[0].Schema = `{"type":"object","properties":{"items":{"type":"array"}}}`
	deps := e.deps()
	deps.Models, deps.Planner = m, nil
	out, err := Complete(t.Context(), in, deps)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := out.Value.(ModelResult); !ok || r.Text != "two needles" {
		t.Fatalf("value = %#v", out.Value)
	}
	if out.PlannerAttempts != 0 || out.Usage.ModelCalls != 2 || len(m.seen) != 2 {
		t.Fatalf("planner attempts %d, model calls %d, requests %d; want 0, 2, 2", out.PlannerAttempts, out.Usage.ModelCalls, len(m.seen))
	}
	if got := toolNamesOf(m.seen[0]); got != "history_search,history_slice,history_peek,count_items" {
		t.Fatalf("tools offered = %s", got)
	}
	second := m.seen[1].Messages
	if len(second) != 7 || second[0].Content != "how many needles?" || len(second[1].ToolCalls) != 5 {
		t.Fatalf("second round messages = %+v", second)
	}
	want := []struct{ id, has string }{
		{"c1", `"truncated":true`}, // one of two matching lines
		{"c2", `"error":"unknown_tool"`},
		{"c3", `"error":"invalid_arguments","message":"arguments.sequence must be of type integer"`},
		{"c4", `"error":"invalid_arguments"`},
		{"c5", `"error":"tool_error"`},
	}
	for i, w := range want {
		got := second[2+i]
		if got.Role != tokenizer.RoleTool || got.ToolCallID != w.id || !strings.Contains(got.Content, w.has) {
			t.Errorf("result %d = %+v, want call %s with %s", i, got, w.id, w.has)
		}
	}
	if !strings.Contains(second[2].Content, "needle one") || strings.Contains(second[2].Content, "needle two") {
		t.Errorf("search result = %s, want only the first match", second[2].Content)
	}
	if e.tools.count() != 1 {
		t.Errorf("tool handler calls = %d, want 1 (refused calls never reach a handler)", e.tools.count())
	}
	if got := ops(out.Trajectory); got != "tool(history_search) tool(rm_rf) tool(history_peek) tool(history_slice) tool(count_items) respond(openrouter) final" {
		t.Errorf("trajectory = %s", got)
	}
}

// TestRespondToolGetsPlanValues: a granted tool's handler gets its
// arguments as plan values (integers are int64, as from a plan) and the
// model reads its result.
func TestRespondToolGetsPlanValues(t *testing.T) {
	e := newEnv(t, needles)
	e.tools.fns["twice"] = func(_ context.Context, args any) (any, error) {
		n, ok := args.(map[string]any)["n"].(int64)
		if !ok {
			return nil, fmt.Errorf("n is %T", args.(map[string]any)["n"])
		}
		return 2 * n, nil
	}
	m := &respondScript{replies: []ModelResult{{ToolCalls: []tokenizer.ToolCall{call("c1", "twice", `{"n":21}`)}}, {Text: "42"}}}
	in := e.input("double 21")
	in.Plan = DirectPlan("openrouter")
	in.Capabilities = append(in.Capabilities, MustCapabilities("tool(twice)")...)
	in.Tools = []ToolSchema{{Name: "twice", Schema: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`}}
	deps := e.deps()
	deps.Models, deps.Planner = m, nil
	if _, err := Complete(t.Context(), in, deps); err != nil {
		t.Fatal(err)
	}
	if got := m.seen[1].Messages[2]; got.ToolCallID != "c1" || got.Content != "42" {
		t.Fatalf("tool result = %+v", got)
	}
}

// TestRespondToolText: a tool's text result reads as the text, not as a
// JSON string of it.
func TestRespondToolText(t *testing.T) {
	e := newEnv(t, needles)
	e.tools.fns["poem"] = func(context.Context, any) (any, error) { return "line one\n\"line two\"", nil }
	m := &respondScript{replies: []ModelResult{{ToolCalls: []tokenizer.ToolCall{call("c1", "poem", `{}`)}}, {Text: "ok"}}}
	in := e.input("a poem")
	in.Plan = DirectPlan("openrouter")
	in.Capabilities = append(in.Capabilities, MustCapabilities("tool(poem)")...)
	in.Tools = []ToolSchema{{Name: "poem"}}
	deps := e.deps()
	deps.Models, deps.Planner = m, nil
	if _, err := Complete(t.Context(), in, deps); err != nil {
		t.Fatal(err)
	}
	if got := m.seen[1].Messages[2].Content; got != "line one\n\"line two\"" {
		t.Fatalf("tool result = %q", got)
	}
}

func TestRespondRoundsEnd(t *testing.T) {
	e := newEnv(t, needles)
	m := &respondScript{replies: []ModelResult{{Text: "again", ToolCalls: []tokenizer.ToolCall{call("c", "history_peek", `{"sequence":1}`)}}}}
	in := e.input("q")
	in.Plan, in.MaxToolRounds = DirectPlan("openrouter"), 2
	deps := e.deps()
	deps.Models, deps.Planner = m, nil
	out, err := Complete(t.Context(), in, deps)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.seen) != 3 || len(m.seen[2].Tools) != 0 || len(m.seen[1].Tools) == 0 {
		t.Fatalf("requests = %d (tools in the last: %d), want 3 with none offered last", len(m.seen), len(m.seen[len(m.seen)-1].Tools))
	}
	if r := out.Value.(ModelResult); r.Text != "again" || r.ToolCalls != nil {
		t.Fatalf("value = %#v, want the text without the calls no request offered", r)
	}
}

func TestRespondSyntax(t *testing.T) {
	p, err := ParseJSON(`{"steps":[{"op":"respond","provider":"p","bind":"a"},{"op":"final","value":{"ref":"var","name":"a"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), DirectPlan("p").String(); got != strings.Replace(want, "answer", "a", 2) {
		t.Fatalf("json plan = %s", got)
	}
	back, err := ParseTerm(p.String(), TermsForTest)
	if err != nil || back.String() != p.String() {
		t.Fatalf("term round trip = %v, %v", back, err)
	}
	_, err = Validate(DirectPlan("p"), Policy{Capabilities: MustCapabilities("model(q)"), Providers: []string{"p"}, Budget: DefaultBudget()})
	if kindOf(err) != KindCapabilityDenied {
		t.Fatalf("respond without model(p): %v, want capability_denied", err)
	}
}
