package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// RespondStep answers the query at once with a tool-using model loop:
// respond(Provider, Bind). It is the one step of a managed turn's direct
// mode ([DirectPlan]), where the request is the packed conversation
// instead of a planner prompt (see [ModelCall].Respond).
//
// Each round sends the query (and the rounds so far) with native tool
// definitions: history_search, history_slice and history_peek over
// input(context) when the capabilities grant context(search), (slice) and
// (peek), and every registered tool they grant. When the model calls
// tools, the step runs them (arguments checked against the tool's schema
// first; a refused or failing call is reported to the model as a tool
// error, not to the caller) and asks again. After [Input].MaxToolRounds
// rounds the request offers no tools, so the model answers. Every round
// is a model call of the budget, every tool call a tool call (a history
// tool: a context operation). Bind gets the answer, a [ModelResult].
//
// The planner's grammar does not offer respond: a planner that answers
// with it is parsed and validated like any other plan.
type RespondStep struct {
	Provider string
	Bind     string
}

// Op returns "respond".
func (*RespondStep) Op() string { return "respond" }

func (*RespondStep) step() {}

// DirectPlan is the trusted plan of a direct turn:
// plan([respond(Provider, answer), final(var(answer))]).
func DirectPlan(provider string) *Plan {
	return &Plan{Steps: []Step{&RespondStep{Provider: provider, Bind: "answer"}, &FinalStep{Value: VarRef{Name: "answer"}}}}
}

// respondTool is a tool a respond step offers: its definition and what
// runs it.
type respondTool struct {
	def     tokenizer.Tool
	schema  map[string]any // the parameters' JSON schema, decoded
	counter string         // the budget counter a call spends
	run     func(ctx context.Context, args map[string]any) (any, error)
}

// historyTools are the cold-history tools, each behind the context
// capability it exercises; arguments are sequences (1-based), as the
// conversation boundary names them.
var historyTools = []struct {
	op, name, description, schema string
}{
	{"search", "history_search", "Search the conversation's older messages (not in the context above) by keywords; returns the best matches with their neighbours, each line \"[sequence] role: text\".",
		`{"type":"object","properties":{"query":{"type":"string","minLength":1},"max_results":{"type":"integer","minimum":1}},"required":["query"]}`},
	{"slice", "history_slice", "Read `length` consecutive messages of the conversation from sequence `start` (1-based).",
		`{"type":"object","properties":{"start":{"type":"integer","minimum":1},"length":{"type":"integer","minimum":1}},"required":["start","length"]}`},
	{"peek", "history_peek", "Read the message at one sequence (1-based) of the conversation.",
		`{"type":"object","properties":{"sequence":{"type":"integer","minimum":1}},"required":["sequence"]}`},
}

// respondTools are the tools f's capabilities grant, history tools first.
func (r *run) respondTools(f *frame) ([]respondTool, error) {
	var out []respondTool
	ref, _ := f.inputs["context"].(handle.Ref)
	for _, h := range historyTools {
		if !hasCap(f.caps, Capability{Kind: "context", Name: h.op}) {
			continue
		}
		op := handle.Op(h.op)
		run := func(ctx context.Context, args map[string]any) (any, error) {
			return r.history(ctx, ref, op, args)
		}
		t, err := newRespondTool(h.name, h.description, h.schema, "context_ops", run)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if r.deps.Tools == nil {
		return out, nil
	}
	for _, ts := range grantedTools(r.in.Tools, f.caps) {
		name := ts.Name
		run := func(ctx context.Context, args map[string]any) (any, error) { return r.deps.Tools.Call(ctx, name, args) }
		t, err := newRespondTool(name, ts.Description, ts.Schema, "tool_calls", run)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func newRespondTool(name, description, schema, counter string, run func(context.Context, map[string]any) (any, error)) (respondTool, error) {
	if schema == "" {
		schema = `{"type":"object"}`
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		return respondTool{}, complFault(D("invalid_tool_schema", Atom(name)), fmt.Sprintf("the schema of tool %s is not a JSON object: %v", name, err))
	}
	return respondTool{def: tokenizer.Tool{Type: "function", Function: tokenizer.FunctionDef{Name: name, Description: description, Parameters: json.RawMessage(schema)}},
		schema: s, counter: counter, run: run}, nil
}

// history runs one history tool on the cold handle, within the
// completion's context limits (a smaller max_results narrows them).
func (r *run) history(ctx context.Context, ref handle.Ref, op handle.Op, args map[string]any) (any, error) {
	lim := r.in.ContextLimits
	q := handle.Request{Op: op}
	switch op {
	case handle.OpSearch:
		q.Pattern, _ = args["query"].(string)
		if _, ok := args["max_results"]; ok {
			lim.MaxResults = min(lim.MaxResults, argInt(args, "max_results"))
		}
	case handle.OpSlice:
		q.Start, q.Length = argInt(args, "start")-1, argInt(args, "length")
	case handle.OpPeek:
		q.Selector, q.N = "item", argInt(args, "sequence")-1
	}
	res, err := r.deps.Contexts.Do(ctx, ref, q, lim)
	if err != nil {
		return nil, err
	}
	return Record{Tag: "result", Fields: []Field{{"items", res.Value}, {"truncated", res.Truncated}}}, nil
}

// argInt is an integer argument the schema checked; one out of the int32
// range reads as the largest, which the handle's bounds then refuse or
// cut.
func argInt(args map[string]any, key string) int {
	n, ok := integer(args[key])
	if !ok {
		return math.MaxInt32
	}
	return n
}

// respond runs a respond step (see [RespondStep]).
func (r *run) respond(ctx context.Context, s *RespondStep, f *frame, ev *Event) (any, error) {
	ev.Input = summarize(r.in.Query, summaryBytes)
	if r.deps.Models == nil {
		return nil, planErr(PhasePreflight, KindUnknownProvider, "no model dependency is configured", Field{"value", Atom(s.Provider)})
	}
	tools, err := r.respondTools(f)
	if err != nil {
		return nil, err
	}
	defs := make([]tokenizer.Tool, len(tools))
	for i, t := range tools {
		defs[i] = t.def
	}
	msgs := []tokenizer.Message{{Role: tokenizer.RoleUser, Content: r.in.Query}}
	for round := 0; ; round++ {
		limit, err := r.meter.beginCall(r.in.PlannerMaxTokens, false)
		if err != nil {
			return nil, err
		}
		req := tokenizer.Request{Messages: msgs, MaxTokens: limit}
		offer := round < r.in.MaxToolRounds && len(defs) > 0
		if offer {
			req.Tools = defs
		}
		call := ModelCall{Provider: s.Provider, Request: req, Options: map[string]any{"max_tokens": int64(limit)},
			Depth: f.depth, Reason: f.reason, Respond: true}
		res, err := guard(ctx, func(ctx context.Context) (ModelResult, error) { return r.deps.Models.Complete(ctx, call) })
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				return nil, ctl
			}
			e := planErr(PhaseExecute, KindModelError, "the model call failed: "+err.Error(), Field{"provider", Atom(s.Provider)})
			e.Cause = err
			return nil, e
		}
		if err := r.meter.endCall(res.Usage, promptBytes(&req), limit); err != nil {
			return nil, err
		}
		if !offer || len(res.ToolCalls) == 0 {
			res.ToolCalls = nil // a call the request did not offer is never run
			if err := r.meter.output(Size(res)); err != nil {
				return nil, err
			}
			r.bind(f, s.Bind, res, ev)
			return res, nil
		}
		msgs = append(msgs, tokenizer.Message{Role: tokenizer.RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls,
			Reasoning: res.Reasoning, ReasoningSignature: res.ReasoningSignature})
		for _, tc := range res.ToolCalls {
			out, err := r.respondCall(ctx, f, tools, tc)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, tokenizer.Message{Role: tokenizer.RoleTool, ToolCallID: tc.ID, Content: out})
		}
	}
}

// respondCall runs one tool call of the model and returns what the model
// reads (charged to the output budget): the result's text when it is
// text, else its canonical JSON, as Input.ToolResult passes it; or
// {"error":Kind,"message":M} for a
// call refused (a tool not offered, arguments that break the schema) or
// failed. The error is the model's to handle; only control signals and
// an exhausted budget end the step.
func (r *run) respondCall(ctx context.Context, f *frame, tools []respondTool, tc tokenizer.ToolCall) (string, error) {
	ev := Event{Op: "tool(" + tc.Function.Name + ")", Input: summarize(tc.Function.Arguments, summaryBytes)}
	refuse := func(kind, msg string) (string, error) {
		ev.Status, ev.Error, ev.Output = "error", Kind(kind), summarize(msg, summaryBytes)
		r.record(f, ev)
		return Encode(map[string]any{"error": kind, "message": msg}), nil
	}
	i := slices.IndexFunc(tools, func(t respondTool) bool { return t.def.Function.Name == tc.Function.Name })
	if i < 0 {
		return refuse("unknown_tool", fmt.Sprintf("no tool %q is offered", tc.Function.Name))
	}
	t := tools[i]
	if err := r.meter.step(t.counter); err != nil {
		return "", err
	}
	raw, err := decodeJSON(tc.Function.Arguments)
	args, ok := jsonValue(raw).(map[string]any)
	if err != nil || !ok {
		return refuse("invalid_arguments", "the arguments must be a JSON object")
	}
	if err := checkSchema(t.schema, args, "arguments"); err != nil {
		return refuse("invalid_arguments", err.Error())
	}
	out, err := guard(ctx, func(ctx context.Context) (any, error) { return t.run(withToolCallID(ctx, tc.ID), args) })
	if err != nil {
		if ctl := control(ctx); ctl != nil {
			return "", ctl
		}
		return refuse("tool_error", err.Error())
	}
	text, isText := out.(string) // text reads as text, not as a JSON string
	if !isText {
		text = Encode(out)
	}
	if r.in.ToolResult != nil {
		text = r.in.ToolResult(tc, text)
	}
	if err := r.meter.output(len(text)); err != nil {
		return "", err
	}
	ev.Status, ev.Output = "ok", summarize(out, summaryBytes)
	r.record(f, ev)
	return text, nil
}

// checkSchema checks v against the subset of JSON Schema tool parameters
// use: type (object, string, integer, number, boolean, array), properties,
// required, minimum and minLength. Keywords outside it are not checked.
func checkSchema(s map[string]any, v any, path string) error {
	if t, ok := s["type"].(string); ok && !hasType(t, v) {
		return fmt.Errorf("%s must be of type %s", path, t)
	}
	switch v := v.(type) {
	case map[string]any:
		req, _ := s["required"].([]any)
		for _, k := range req {
			if k, ok := k.(string); ok {
				if _, ok := v[k]; !ok {
					return fmt.Errorf("%s.%s is required", path, k)
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, x := range v {
			if ps, ok := props[k].(map[string]any); ok {
				if err := checkSchema(ps, x, path+"."+k); err != nil {
					return err
				}
			}
		}
	case int64:
		if m, ok := s["minimum"].(float64); ok && float64(v) < m {
			return fmt.Errorf("%s must be at least %v", path, m)
		}
	case float64:
		if m, ok := s["minimum"].(float64); ok && v < m {
			return fmt.Errorf("%s must be at least %v", path, m)
		}
	case string:
		if m, ok := s["minLength"].(float64); ok && float64(len([]rune(v))) < m {
			return fmt.Errorf("%s must have at least %v characters", path, m)
		}
	}
	return nil
}

func hasType(t string, v any) bool {
	switch v.(type) {
	case map[string]any:
		return t == "object"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case []any:
		return t == "array"
	case int64:
		return t == "integer" || t == "number"
	case float64:
		return t == "number"
	case nil:
		return t == "null"
	}
	return false
}
