package runtime

import (
	"context"
	"log/slog"
)

// Logs: a managed turn logs through Options.Logger, every line with its
// conversation_id and turn_id — info when it ends (completed, replayed)
// with its tokens, cache and cost, warn when it fails, debug for each pack
// and provider call. Timings are in the logs and receipts only, never in
// a request.

// turnLogger is the runtime's logger with a turn's ids.
func (c Conversation) turnLogger(turnID string) *slog.Logger {
	return c.st.rt.opts.Logger.With(slog.String("conversation_id", c.id), slog.String("turn_id", turnID))
}

// logTurn logs how a turn ended.
func logTurn(ctx context.Context, log *slog.Logger, res TurnResult, err error) {
	if err != nil {
		attrs := []slog.Attr{slog.String("error", err.Error())}
		if te, ok := err.(*TurnError); ok {
			attrs = append(attrs, slog.String("kind", te.Kind))
		}
		log.LogAttrs(ctx, slog.LevelWarn, "turn failed", attrs...)
		return
	}
	if !log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	ts := res.Receipt.Stats()
	msg := "turn completed"
	if res.Replayed {
		msg = "turn replayed"
	}
	log.LogAttrs(ctx, slog.LevelInfo, msg, slog.Int64("user_seq", res.User.Seq), slog.Int64("assistant_seq", res.Assistant.Seq),
		slog.Int("calls", ts.Calls), slog.Int64("context_tokens", ts.ContextTokens), slog.Int("prompt_tokens", ts.PromptTokens),
		slog.Int("cached_tokens", ts.CachedTokens), slog.Int("output_tokens", ts.OutputTokens),
		slog.Float64("cost_usd", ts.CostUSD), slog.Float64("total_ms", ts.LatencyMS))
}

// logCall logs one provider call (one HTTP attempt) at debug level.
func logCall(ctx context.Context, log *slog.Logger, rc ReceiptCall) {
	if !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("kind", rc.Kind), slog.String("model", rc.model), slog.Int("local_prompt_tokens", rc.LocalPromptTokens),
		slog.String("request_sha256", rc.RequestSHA256)}
	if rc.ProviderPromptTokens != nil {
		attrs = append(attrs, slog.Int("provider_prompt_tokens", *rc.ProviderPromptTokens))
	}
	if rc.CachedTokens != nil {
		attrs = append(attrs, slog.Int("cached_tokens", *rc.CachedTokens))
	}
	if rc.Status != 0 {
		attrs = append(attrs, slog.Int("status", rc.Status))
	}
	if rc.Error != "" {
		attrs = append(attrs, slog.String("error", rc.Error))
	}
	log.LogAttrs(ctx, slog.LevelDebug, "provider call", attrs...)
}
