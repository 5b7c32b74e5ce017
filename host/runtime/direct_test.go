package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// respondModels plays a scripted respond loop: each reply in turn, and
// every request it was sent.
type respondModels struct {
	mu      sync.Mutex
	replies []plan.ModelResult
	reqs    []tokenizer.Request
}

func (m *respondModels) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !call.Respond {
		return plan.ModelResult{}, errors.New("a direct turn sent a model call that is no respond round")
	}
	m.reqs = append(m.reqs, call.Request)
	r := m.replies[min(len(m.reqs), len(m.replies))-1]
	if call.OnDelta != nil && r.Text != "" {
		call.OnDelta(r.Text)
	}
	return r, nil
}

func search(id, query string, max int) plan.ModelResult {
	return plan.ModelResult{ToolCalls: []tokenizer.ToolCall{{ID: id, Type: "function",
		Function: tokenizer.FunctionCall{Name: "history_search", Arguments: fmt.Sprintf(`{"query":%q,"max_results":%d}`, query, max)}}}}
}

// longConv is a conversation whose first answer holds the needle, followed
// by enough filler that a small ceiling evicts it.
func longConv(t *testing.T) Conversation {
	var msgs []store.Message
	msgs = append(msgs, user("what is the vault code?"), store.Message{Role: store.RoleAssistant, Content: store.TextContent("the vault code is ZEPHYR-4471")})
	for i := range 30 {
		msgs = append(msgs, user(fmt.Sprintf("filler question %d about the weather and the garden, label w%d", i, i)),
			store.Message{Role: store.RoleAssistant, Content: store.TextContent(fmt.Sprintf("filler answer %d about sun, rain and tomatoes", i))})
	}
	return memConv(t, msgs...)
}

func directOpts(m plan.Models, reg *handle.Registry, ceiling int64) TurnOptions {
	o := turnOpts(nil, reg)
	o.Mode = ModeDirect
	o.Deps.Models = m
	o.Pack.Policy.MaxContextTokens, o.Pack.Policy.ProviderContextTokens = ceiling, ceiling
	o.Pack.Policy.ReserveOutputTokens = 100
	return o
}

// TestDirectTurnSearchesColdHistory: a direct turn calls no planner; the
// evicted needle is in no request until a history_search result brings
// it; every round is a receipt call that replays byte for byte.
func TestDirectTurnSearchesColdHistory(t *testing.T) {
	c := longConv(t)
	m := &respondModels{replies: []plan.ModelResult{search("s1", "w20", 2), search("s2", "vault code", 1), {Text: "It is ZEPHYR-4471."}}}
	var deltas []string
	opts := directOpts(m, handle.New(nil), 600)
	opts.OnEvent = func(ev TurnEvent) {
		if ev.Kind == "delta" {
			deltas = append(deltas, ev.Text)
		}
	}
	res, err := c.Turn(context.Background(), user("remind me of the vault code"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Assistant.Message.Content.PlainText() != "It is ZEPHYR-4471." || strings.Join(deltas, "") != "It is ZEPHYR-4471." {
		t.Fatalf("answer %q, deltas %q", res.Assistant.Message.Content.PlainText(), deltas)
	}
	if len(m.reqs) != 3 {
		t.Fatalf("requests = %d, want 3", len(m.reqs))
	}
	has := func(req tokenizer.Request) bool {
		for _, msg := range req.Messages {
			if strings.Contains(msg.Text(), "ZEPHYR") {
				return true
			}
		}
		return false
	}
	if has(m.reqs[0]) || has(m.reqs[1]) || !has(m.reqs[2]) {
		t.Fatalf("needle in requests = %v %v %v, want only the last (after the second search)", has(m.reqs[0]), has(m.reqs[1]), has(m.reqs[2]))
	}
	first := m.reqs[0]
	if len(first.Tools) != 3 || first.Tools[0].Function.Name != "history_search" {
		t.Fatalf("tools offered = %+v", first.Tools)
	}
	if last := first.Messages[len(first.Messages)-1]; last.Content != "remind me of the vault code" {
		t.Fatalf("the first round ends with %+v, want the user's message once", last)
	}
	// The last round ends with the user's message, then each call with its
	// result (older turns made room for them: the pack was compiled again).
	tail := m.reqs[2].Messages[len(m.reqs[2].Messages)-5:]
	if tail[0].Content != "remind me of the vault code" || len(tail[1].ToolCalls) != 1 || tail[2].ToolCallID != "s1" ||
		len(tail[3].ToolCalls) != 1 || tail[4].ToolCallID != "s2" {
		t.Fatalf("the last round ends with %+v", tail)
	}
	var kinds []string
	for _, call := range res.Receipt.Calls {
		kinds = append(kinds, call.Kind)
		if call.LocalPromptTokens > 600 {
			t.Errorf("a round counted %d tokens over the 600 ceiling", call.LocalPromptTokens)
		}
	}
	if strings.Join(kinds, ",") != "respond,respond,respond" {
		t.Fatalf("receipt calls = %v", kinds)
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
	// The calls and results are stored with the answer, in order, and the
	// next turn's pack keeps each result right after its call.
	var stored []string
	for seq := res.User.Seq + 1; seq <= res.Assistant.Seq; seq++ {
		r, err := c.Message(seq)
		if err != nil {
			t.Fatalf("seq %d (user %d, assistant %d): %v", seq, res.User.Seq, res.Assistant.Seq, err)
		}
		stored = append(stored, fmt.Sprintf("%s/%d/%s", r.Message.Role, len(r.Message.ToolCalls), r.Message.ToolCallID))
	}
	if strings.Join(stored, " ") != "assistant/1/ tool/0/s1 assistant/1/ tool/0/s2 assistant/0/" {
		t.Fatalf("stored after the user message: %v", stored)
	}
	m.reqs, m.replies = nil, []plan.ModelResult{{Text: "bye"}}
	opts.OnEvent = nil
	if _, err := c.Turn(context.Background(), user("thanks"), opts); err != nil {
		t.Fatal(err)
	}
	msgs := m.reqs[0].Messages
	for i, msg := range msgs {
		if msg.ToolCallID != "" && (i == 0 || len(msgs[i-1].ToolCalls) == 0 || msgs[i-1].ToolCalls[0].ID != msg.ToolCallID) {
			t.Fatalf("message %d answers %s without its call before it: %+v", i, msg.ToolCallID, msgs)
		}
	}
}

// TestDirectTurnToolResultOverCeiling: a tool result that does not fit is
// a typed overflow; the turn stores no answer, only the user message and
// a failed receipt.
func TestDirectTurnToolResultOverCeiling(t *testing.T) {
	c := longConv(t)
	m := &respondModels{replies: []plan.ModelResult{search("s1", "filler", 16), {Text: "never"}}}
	opts := directOpts(m, handle.New(nil), 600)
	opts.Completion.ContextLimits = handle.Limits{MaxResults: 16, MaxBytes: 16384}
	before, _ := c.Stats()
	_, err := c.Turn(context.Background(), user("list every filler"), opts)
	var te *TurnError
	if !errors.As(err, &te) || te.Kind != "context_budget_failed" || te.Receipt == nil || te.Receipt.Status != StatusFailed {
		t.Fatalf("err = %v, want a context_budget_failed turn with a failed receipt", err)
	}
	after, _ := c.Stats()
	if after.Messages != before.Messages+1 || len(m.reqs) != 1 {
		t.Fatalf("messages %d -> %d, requests %d; want only the user message and one request", before.Messages, after.Messages, len(m.reqs))
	}
}

// TestDirectTurnRetryByID: the same turn id after success returns the
// stored answer and calls no model.
func TestDirectTurnRetryByID(t *testing.T) {
	c := longConv(t)
	m := &respondModels{replies: []plan.ModelResult{{Text: "hi"}}}
	opts := directOpts(m, handle.New(nil), 600)
	opts.TurnID = "d1"
	for range 2 {
		res, err := c.Turn(context.Background(), user("hello"), opts)
		if err != nil || res.Assistant.Message.Content.PlainText() != "hi" {
			t.Fatalf("turn = %+v, %v", res, err)
		}
	}
	if len(m.reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(m.reqs))
	}
}

func TestDirectTurnNeedsAProvider(t *testing.T) {
	c := longConv(t)
	opts := directOpts(&respondModels{}, handle.New(nil), 600)
	opts.Completion.Providers = nil
	if _, err := c.Turn(context.Background(), user("hello"), opts); err == nil || !strings.Contains(err.Error(), "direct turn needs") {
		t.Fatalf("err = %v", err)
	}
}

// streamThenWait streams a first delta, then waits for the turn to be
// cancelled, as a provider mid-stream.
type streamThenWait struct{}

func (streamThenWait) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	call.OnDelta("partial")
	<-ctx.Done()
	return plan.ModelResult{}, ctx.Err()
}

// TestDirectTurnCancelledMidStream: cancelling after the first delta ends
// the turn as cancelled: no answer is stored, the receipt says failed.
func TestDirectTurnCancelledMidStream(t *testing.T) {
	c := longConv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := directOpts(streamThenWait{}, handle.New(nil), 600)
	opts.OnEvent = func(ev TurnEvent) {
		if ev.Kind == "delta" {
			cancel()
		}
	}
	before, _ := c.Stats()
	_, err := c.Turn(ctx, user("hello"), opts)
	var te *TurnError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &te) || te.Receipt == nil || te.Receipt.Status != StatusFailed {
		t.Fatalf("err = %v, want a cancelled turn with a failed receipt", err)
	}
	if after, _ := c.Stats(); after.Messages != before.Messages+1 {
		t.Fatalf("messages %d -> %d, want only the user message", before.Messages, after.Messages)
	}
}

// TestHistorySearchHasNoEmptyHit: what history_search sends the model is
// "[sequence] role: text" lines for every hit, and a hit on a message
// with no text — an assistant's tool call (found by its arguments), an
// image found by its caption — reads as what it holds, never as "".
func TestHistorySearchHasNoEmptyHit(t *testing.T) {
	c := longConv(t)
	m := &respondModels{replies: []plan.ModelResult{search("s1", "vault code", 3), {Text: "It is ZEPHYR-4471."}}}
	if _, err := c.Turn(context.Background(), user("remind me of the vault code"), directOpts(m, handle.New(nil), 600)); err != nil {
		t.Fatal(err)
	}
	img := store.Message{Role: store.RoleUser, Content: store.PartsContent(store.CaptionedImagePart("https://example.com/v.png", "", "the vault door"))}
	if _, err := c.Append(img, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := c.Append(user(fmt.Sprintf("more filler %d", i)), AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m.reqs, m.replies = nil, []plan.ModelResult{search("s2", "vault", 8), {Text: "again"}}
	if _, err := c.Turn(context.Background(), user("and the vault code again?"), directOpts(m, handle.New(nil), 900)); err != nil {
		t.Fatal(err)
	}
	msgs := m.reqs[len(m.reqs)-1].Messages
	var result struct {
		Result struct {
			Items []struct {
				Index int    `json:"index"`
				Value string `json:"value"`
			} `json:"items"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(msgs[len(msgs)-1].Content), &result); err != nil {
		t.Fatalf("tool result %q: %v", msgs[len(msgs)-1].Content, err)
	}
	var toolCall, image bool
	for _, it := range result.Result.Items {
		if !strings.HasPrefix(it.Value, "[") || strings.Contains(it.Value+"\n", ": \n") {
			t.Errorf("hit %d reads %q: want [sequence] role: text lines, none empty", it.Index, it.Value)
		}
		toolCall = toolCall || strings.Contains(it.Value, `history_search({"query":"vault code","max_results":3})`)
		image = image || strings.Contains(it.Value, "[image: the vault door]")
	}
	if !toolCall || !image {
		t.Errorf("the tool call (%v) and the image (%v) read as what they hold: %s", toolCall, image, msgs[len(msgs)-1].Content)
	}
}
