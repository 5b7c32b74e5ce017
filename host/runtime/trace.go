package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Tracing: a managed turn as OpenTelemetry spans, following the GenAI
// semantic conventions where they name something (semconv v1.39.0) and
// rlmpl.* attributes where they do not. Off unless Options.TracerProvider
// is set; then a turn is
//
//	invoke_agent rlmpl            the turn (gen_ai.conversation.id, rlmpl.turn.id, totals, cost)
//	├── pack                      each request composed (units, tokens per stage, solver status and work)
//	├── chat {model}              each provider call (usage as reported, our count and its method, the request's SHA-256)
//	├── execute_tool {name}       each tool a plan or a direct turn called (an MCP
//	│                             tool's: rlmpl.mcp.server, rlmpl.mcp.tool)
//	└── retrieval                 each cold-history search (hit sequences)
//
// Message content (requests, answers, tool arguments and results, search
// queries) is recorded only with Options.TraceContent; credentials never
// are (requests carry none: keys travel in headers).

// Attribute keys the GenAI conventions define but semconv v1.39.0 does not
// export, and rlmpl's own.
const (
	attrCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	attrCacheWrite     = attribute.Key("gen_ai.usage.cache_write.input_tokens")
	attrCacheCreation  = attribute.Key("gen_ai.usage.cache_creation.input_tokens") // the same count, by the name of semconv's registry
	attrReasoning      = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	attrTurnID         = attribute.Key("rlmpl.turn.id")
	attrMCPServer      = attribute.Key("rlmpl.mcp.server")
	attrMCPTool        = attribute.Key("rlmpl.mcp.tool")
	attrTurnStatus     = attribute.Key("rlmpl.turn.status")
	attrTurnReplayed   = attribute.Key("rlmpl.turn.replayed")
	attrTurnMode       = attribute.Key("rlmpl.turn.mode")
	attrCostUSD        = attribute.Key("rlmpl.cost_usd")
	attrCostSource     = attribute.Key("rlmpl.cost_source")
	attrCachePrefix    = attribute.Key("rlmpl.cache_prefix_tokens")
	attrPackPurpose    = attribute.Key("rlmpl.pack.purpose")
	attrPackCandidates = attribute.Key("rlmpl.pack.candidates")
	attrPackUnits      = attribute.Key("rlmpl.pack.units")
	attrPackTokens     = attribute.Key("rlmpl.pack.total_tokens")
	attrPackLimit      = attribute.Key("rlmpl.pack.limit")
	attrPackMethod     = attribute.Key("rlmpl.pack.count_method")
	attrStageNames     = attribute.Key("rlmpl.pack.stage.names")
	attrStageTokens    = attribute.Key("rlmpl.pack.stage.tokens")
	attrBoundary       = attribute.Key("rlmpl.pack.boundary.active")
	attrPackWindow     = attribute.Key("rlmpl.pack.stable_window") // kept or moved
	attrSolverStatus   = attribute.Key("rlmpl.solver.status")
	attrSolverWork     = attribute.Key("rlmpl.solver.work")
	attrSolverUtility  = attribute.Key("rlmpl.solver.utility")
	attrSolverBound    = attribute.Key("rlmpl.solver.bound")
	attrCallKind       = attribute.Key("rlmpl.call.kind")
	attrCallDepth      = attribute.Key("rlmpl.call.depth")
	attrCallAttempts   = attribute.Key("rlmpl.call.attempts")
	attrLocalTokens    = attribute.Key("rlmpl.request.local_tokens")
	attrCountMethod    = attribute.Key("rlmpl.request.count_method")
	attrRequestSHA     = attribute.Key("rlmpl.request.sha256")
	attrHTTPStatus     = attribute.Key("http.response.status_code")
	attrRetrievalQuery = attribute.Key("rlmpl.retrieval.query")
	attrRetrievalHits  = attribute.Key("rlmpl.retrieval.hit_sequences")
	attrRetrievalTrunc = attribute.Key("rlmpl.retrieval.truncated")
)

// opRetrieval is the operation name of a cold-history search span.
const opRetrieval = "retrieval"

// tracerName is the instrumentation scope of rlmpl's spans.
const tracerName = "github.com/rlmpl/rlmpl/host/runtime"

// startTurnSpan starts a turn's span, or returns ctx and nil when tracing
// is off.
func (c Conversation) startTurnSpan(ctx context.Context, opts TurnOptions) (context.Context, trace.Span) {
	tr := c.st.rt.tracer
	if tr == nil {
		return ctx, nil
	}
	mode := opts.Mode
	if mode == "" {
		mode = ModePlanner
	}
	return tr.Start(ctx, "invoke_agent rlmpl", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentNameKey.String("rlmpl"),
		semconv.GenAIConversationIDKey.String(c.id), attrTurnMode.String(mode)))
}

// endTurnSpan records a turn's outcome on its span and ends it.
func endTurnSpan(span trace.Span, res TurnResult, err error) {
	if span == nil {
		return
	}
	defer span.End()
	r := res.Receipt
	if err != nil {
		kind := "turn_failed"
		if te, ok := err.(*TurnError); ok {
			kind = te.Kind
			span.SetAttributes(attrTurnID.String(te.TurnID))
			if te.Receipt != nil {
				r = *te.Receipt
			}
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(kind))
		span.SetStatus(codes.Error, err.Error())
	}
	if res.TurnID != "" {
		span.SetAttributes(attrTurnID.String(res.TurnID), attrTurnReplayed.Bool(res.Replayed))
	}
	if r.TurnID == "" {
		return
	}
	span.SetAttributes(attrTurnStatus.String(r.Status), attrCachePrefix.Int(r.CachePrefixTokens),
		semconv.GenAIUsageInputTokensKey.Int(r.Usage.PromptTokens), semconv.GenAIUsageOutputTokensKey.Int(r.Usage.CompletionTokens))
	if n, ok := r.CachedTokens(); ok {
		span.SetAttributes(attrCacheRead.Int(n))
	}
	if n, ok := r.CacheWriteTokens(); ok {
		span.SetAttributes(attrCacheWrite.Int(n), attrCacheCreation.Int(n))
	}
	if usd, unpriced := r.Cost(); unpriced == 0 && len(r.Calls) > 0 {
		span.SetAttributes(attrCostUSD.Float64(usd))
	}
}

// startPackSpan starts the span of one pack of a turn (nil when off).
func (t *turn) startPackSpan(ctx context.Context, planner bool) (context.Context, trace.Span) {
	tr := t.c.st.rt.tracer
	if tr == nil {
		return ctx, nil
	}
	purpose := "model"
	if planner {
		purpose = "planner"
	}
	return tr.Start(ctx, "pack", trace.WithAttributes(attrPackPurpose.String(purpose)))
}

// endPackSpan records a pack on its span and ends it.
func endPackSpan(span trace.Span, cp Packed, err error) {
	if span == nil {
		return
	}
	defer span.End()
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("context_budget_failed"))
		span.SetStatus(codes.Error, err.Error())
		return
	}
	names := make([]string, len(cp.Ledger.Stages))
	tokens := make([]int64, len(cp.Ledger.Stages))
	for i, s := range cp.Ledger.Stages {
		names[i], tokens[i] = s.Name, s.Charged
	}
	span.SetAttributes(attrPackCandidates.Int(len(cp.Units)), attrPackUnits.Int(len(cp.Selected)),
		attrPackTokens.Int64(cp.Ledger.Total), attrPackLimit.Int64(cp.Ledger.Limit), attrPackMethod.String(cp.Ledger.Method.String()),
		attrStageNames.StringSlice(names), attrStageTokens.Int64Slice(tokens), attrBoundary.Bool(cp.Boundary.Active),
		attrSolverStatus.String(cp.Status.String()), attrSolverWork.Int64(cp.Stats.Work),
		attrSolverUtility.Int64(cp.Utility), attrSolverBound.Int64(cp.Bound))
	if cp.Boundary.Stable != "" {
		span.SetAttributes(attrPackWindow.String(cp.Boundary.Stable))
	}
}

// callOutcome is what a provider call gave back, for its span.
type callOutcome struct {
	body   []byte
	usage  plan.Usage
	model  string // the model that answered
	finish string
	output string // the answer's text (recorded only with TraceContent)
	calls  []tokenizer.ToolCall
}

// startCallSpan starts the span of one provider call (nil when off).
func (t *turn) startCallSpan(ctx context.Context, kind, providerName string, depth int, req tokenizer.Request, cc composedCall) (context.Context, trace.Span) {
	tr := t.c.st.rt.tracer
	if tr == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, attrCallKind.String(kind), attrCallDepth.Int(depth),
		attrLocalTokens.Int(cc.count.Tokens), attrCountMethod.String(countMethod(cc.count, cc.calib))}
	if providerName != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(providerName))
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokensKey.Int(req.MaxTokens))
	}
	if t.c.st.rt.opts.TraceContent {
		if b, err := json.Marshal(req.Messages); err == nil {
			attrs = append(attrs, semconv.GenAIInputMessagesKey.String(string(b)))
		}
	}
	name := "chat"
	if req.Model != "" {
		name += " " + req.Model
	}
	return tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endCallSpan records a call's outcome (its receipt entries: one per HTTP
// attempt) on its span and ends it.
func (t *turn) endCallSpan(span trace.Span, out callOutcome, calls []ReceiptCall, err error) {
	if span == nil {
		return
	}
	defer span.End()
	if len(calls) > 0 {
		last := calls[len(calls)-1]
		span.SetAttributes(attrRequestSHA.String(last.RequestSHA256), attrCallAttempts.Int(len(calls)))
		if last.model != "" {
			span.SetName("chat " + last.model)
			span.SetAttributes(semconv.GenAIRequestModelKey.String(last.model))
		}
		if last.Status != 0 {
			span.SetAttributes(attrHTTPStatus.Int(last.Status))
		}
		if last.CostUSD != nil {
			span.SetAttributes(attrCostUSD.Float64(*last.CostUSD), attrCostSource.String(last.CostSource))
		}
	}
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(fmt.Sprintf("%T", err)))
		span.SetStatus(codes.Error, err.Error())
		return
	}
	u := out.usage
	if out.model != "" {
		span.SetAttributes(semconv.GenAIResponseModelKey.String(out.model))
	}
	if out.finish != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasonsKey.StringSlice([]string{out.finish}))
	}
	if u.PromptKnown {
		span.SetAttributes(semconv.GenAIUsageInputTokensKey.Int(u.PromptTokens))
	}
	if u.CompletionKnown {
		span.SetAttributes(semconv.GenAIUsageOutputTokensKey.Int(u.CompletionTokens))
	}
	if u.CachedKnown {
		span.SetAttributes(attrCacheRead.Int(u.CachedTokens))
	}
	if u.CacheWriteKnown {
		span.SetAttributes(attrCacheWrite.Int(u.CacheWriteTokens), attrCacheCreation.Int(u.CacheWriteTokens))
	}
	if u.ReasoningKnown {
		span.SetAttributes(attrReasoning.Int(u.ReasoningTokens))
	}
	if t.c.st.rt.opts.TraceContent {
		msg := tokenizer.Message{Role: tokenizer.RoleAssistant, Content: out.output, ToolCalls: out.calls}
		if b, err := json.Marshal([]tokenizer.Message{msg}); err == nil {
			span.SetAttributes(semconv.GenAIOutputMessagesKey.String(string(b)))
		}
	}
}

// tracedTools makes each tool call of a turn an execute_tool span.
type tracedTools struct {
	t     *turn
	inner plan.Tools
}

func (tt tracedTools) Call(ctx context.Context, name string, args any) (any, error) {
	rt := tt.t.c.st.rt
	ctx, span := rt.tracer.Start(ctx, "execute_tool "+name, trace.WithAttributes(
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolNameKey.String(name), semconv.GenAIToolTypeKey.String("function")))
	defer span.End()
	if id := plan.ToolCallID(ctx); id != "" {
		span.SetAttributes(semconv.GenAIToolCallIDKey.String(id))
	}
	if m, ok := tt.inner.(mcpCalls); ok {
		if server, tool, isMCP := m.origin(name); isMCP {
			span.SetAttributes(semconv.McpMethodNameKey.String("tools/call"), attrMCPServer.String(server), attrMCPTool.String(tool))
		}
	}
	if rt.opts.TraceContent {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(plan.Encode(args)))
	}
	res, err := tt.inner.Call(ctx, name, args)
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, err.Error())
		return res, err
	}
	if rt.opts.TraceContent {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(plan.Encode(res)))
	}
	return res, nil
}

// tracedContexts makes each search of a turn's context handles a
// retrieval span (hit sequences; the query only with TraceContent).
type tracedContexts struct {
	t     *turn
	inner plan.Contexts
}

func (tc tracedContexts) Do(ctx context.Context, ref handle.Ref, req handle.Request, lim handle.Limits) (handle.Result, error) {
	if req.Op != handle.OpSearch {
		return tc.inner.Do(ctx, ref, req, lim)
	}
	rt := tc.t.c.st.rt
	ctx, span := rt.tracer.Start(ctx, opRetrieval, trace.WithAttributes(semconv.GenAIOperationNameKey.String(opRetrieval),
		semconv.GenAIConversationIDKey.String(tc.t.c.id)))
	defer span.End()
	if rt.opts.TraceContent {
		span.SetAttributes(attrRetrievalQuery.String(req.Pattern))
	}
	res, err := tc.inner.Do(ctx, ref, req, lim)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return res, err
	}
	if hits, ok := res.Value.([]handle.Match); ok {
		seqs := make([]int64, len(hits))
		for i, m := range hits {
			seqs[i] = int64(m.Index) + 1 // a conversation's item i is message i+1
		}
		span.SetAttributes(attrRetrievalHits.Int64Slice(seqs))
	}
	span.SetAttributes(attrRetrievalTrunc.Bool(res.Truncated))
	return res, nil
}
