package runtime

import (
	"errors"
	"fmt"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// A direct turn answers at once: the completion runs the trusted plan
// [plan.DirectPlan], whose respond step sends the packed conversation to
// the model with native tools (history_search, history_slice,
// history_peek over the turn's cold handle, and the granted tools) for a
// few rounds. Each round is composed here like a model step: the caller's
// sections, the packed conversation, and the rounds so far as fixed
// trailer sections (a call with its results, or nothing), under the same
// ceiling; the tools offered are a ledger stage.

// Turn modes (TurnOptions.Mode).
const (
	ModePlanner = "planner"
	ModeDirect  = "direct"
)

// checkMode checks the mode and the dependencies it needs: a planner for
// ModePlanner, a provider to answer for ModeDirect.
func (o *TurnOptions) checkMode() error {
	switch o.Mode {
	case "", ModePlanner:
		if o.Deps.Planner == nil {
			return errors.New("runtime: TurnOptions.Deps.Planner is required")
		}
	case ModeDirect:
		if len(o.Completion.Providers) == 0 || o.Deps.Models == nil {
			return errors.New("runtime: a direct turn needs TurnOptions.Completion.Providers and Deps.Models")
		}
	default:
		return fmt.Errorf("runtime: TurnOptions.Mode: must be %s or %s (got %q)", ModePlanner, ModeDirect, o.Mode)
	}
	return nil
}

// stepTrailer is what a plan's model call adds after the packed
// conversation, and the base request of its pack. A model step's
// messages are text; a respond round's first message is the user's
// message (already the conversation's last) and the rest its tool rounds,
// kept with their calls.
func stepTrailer(call plan.ModelCall) ([]pack.TextSection, tokenizer.Request) {
	msgs := call.Request.Messages
	base := tokenizer.Request{MaxTokens: call.Request.MaxTokens}
	if call.Respond {
		msgs, base.Tools = msgs[1:], call.Request.Tools
	}
	var trailer []pack.TextSection
	for _, m := range msgs {
		s := pack.TextSection{Name: "step_" + m.Role, Visibility: pack.Model, Role: m.Role, Text: m.Text()}
		if call.Respond {
			s.Name, s.ToolCalls, s.ToolCallID = "tool_round_"+m.Role, m.ToolCalls, m.ToolCallID
			if m.ReasoningSignature != "" {
				s.Reasoning, s.ReasoningSignature = m.Reasoning, m.ReasoningSignature
			}
		}
		trailer = append(trailer, s)
	}
	return trailer, base
}

// toolResult is what a direct turn's model reads of a tool's result
// (plan.Input.ToolResult): the result, or, when it is longer than the
// policy's share of the room under the ceiling
// (Utilities.ToolExcerptPercent), its first that many tokens and the
// note. The tool message stored with the answer keeps the whole result.
func (t *turn) toolResult(call tokenizer.ToolCall, text string) string {
	u := t.opts.Pack.Utilities
	p := t.opts.Pack.Policy
	limit := int((p.Effective() - p.ReserveOutputTokens - p.SafetyMarginTokens) * int64(u.ToolExcerptPercent) / 100)
	if limit <= 0 || len(text) <= limit { // a token is at least a byte
		return text
	}
	total := t.counter.Count(text).Tokens
	if total <= limit {
		return text
	}
	prefix, shown := pack.Prefix(t.counter, text, limit)
	t.mu.Lock()
	if t.whole == nil {
		t.whole = map[string]string{}
	}
	t.whole[call.ID] = text
	t.mu.Unlock()
	return prefix + "\n" + pack.RenderToolExcerptNote(u.ToolExcerptTemplate, call.Function.Name, shown, total)
}

// callKind is a model call's kind in the receipt.
func callKind(call plan.ModelCall) string {
	if call.Respond {
		return "respond"
	}
	return "model"
}

// noteRounds keeps the tool rounds a respond call sent: the last call's
// are every round of the turn, stored with the answer.
func (t *turn) noteRounds(call plan.ModelCall) {
	if !call.Respond {
		return
	}
	t.mu.Lock()
	t.rounds = call.Request.Messages[1:]
	t.mu.Unlock()
}

// toolMessages are the turn's tool calls and results as stored messages,
// in the order sent, so later packs keep each call with its result.
func (t *turn) toolMessages() []store.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]store.Message, len(t.rounds))
	for i, m := range t.rounds {
		text, cut := t.whole[m.ToolCallID]
		if !cut {
			text = m.Content
		}
		sm := store.Message{Role: store.RoleTool, ToolCallID: m.ToolCallID, Content: store.TextContent(text)}
		if images := t.images[m.ToolCallID]; len(images) > 0 {
			sm.Content = store.PartsContent(append([]store.Part{store.TextPart(text)}, images...)...)
		}
		if m.Role == tokenizer.RoleAssistant {
			sm = store.Message{Role: store.RoleAssistant, Content: store.TextContent(m.Content)}
			for _, tc := range m.ToolCalls {
				sm.ToolCalls = append(sm.ToolCalls, store.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
		}
		out[i] = sm
	}
	return out
}
