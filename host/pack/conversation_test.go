package pack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/tokenizer"
)

var testCounter = func() tokenizer.Counter {
	reg, err := tokenizer.New(nil)
	if err != nil {
		panic(err)
	}
	c, err := reg.Counter("gpt-4o")
	if err != nil {
		panic(err)
	}
	return c
}()

// transcript builds n turns alternating user/assistant, with a tool-call
// exchange every toolEvery turns (assistant call + tool result).
func transcript(r *rand.Rand, n int, toolEvery int) []Turn {
	var ts []Turn
	seq := int64(0)
	add := func(m tokenizer.Message) {
		seq++
		ts = append(ts, Turn{Seq: seq, Message: m, Content: testCounter.Count(m.Content), Cached: true})
	}
	for len(ts) < n {
		words := strings.Repeat("word ", 1+r.IntN(60))
		switch {
		case toolEvery > 0 && r.IntN(toolEvery) == 0 && len(ts)+2 <= n:
			id := fmt.Sprintf("call_%d", seq+1)
			add(tokenizer.Message{Role: "assistant", ToolCalls: []tokenizer.ToolCall{{ID: id, Type: "function",
				Function: tokenizer.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}}})
			add(tokenizer.Message{Role: "tool", ToolCallID: id, Content: "result " + words})
		case len(ts)%2 == 0:
			add(tokenizer.Message{Role: "user", Content: "question " + words})
		default:
			add(tokenizer.Message{Role: "assistant", Content: "answer " + words})
		}
	}
	return ts
}

func convInput(turns []Turn, p Policy) ConversationInput {
	return ConversationInput{ConversationID: "c1", Total: int64(len(turns)), Turns: turns, Policy: p,
		Boundary: true, Counter: testCounter, Utilities: DefaultUtilities(),
		Sections: []TextSection{{Name: "system", Visibility: Model, Text: "You are helpful."}}}
}

func TestConversationPackFitsAll(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	turns := transcript(r, 20, 0)
	p := policy(100000, 100000, 1000, 100)
	p.MinRecentTurns = 5
	cp, err := Conversation(context.Background(), convInput(turns, p))
	if err != nil {
		t.Fatal(err)
	}
	// system + boundary + 20 turns
	if len(cp.Request.Messages) != 22 || cp.Request.Messages[1].Content[:22] != "Cold history boundary:" {
		t.Fatalf("messages %d: %q", len(cp.Request.Messages), cp.Request.Messages[1].Content)
	}
	if !cp.Boundary.Active || cp.Boundary.ColdThrough != 15 || len(cp.Boundary.Omitted) != 0 {
		t.Fatalf("boundary %+v", cp.Boundary)
	}
	if !strings.Contains(BoundaryText("c1", 15), "Sequences 1..15 may be absent") {
		t.Fatal("boundary text")
	}
}

// TestConversationPackUnderTightCap: the default utilities value every
// older turn alike (1000 + seq), so the pack keeps as many older turns as
// fit, preferring newer ones on ties — not necessarily a contiguous suffix.
func TestConversationPackUnderTightCap(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	turns := transcript(r, 60, 0)
	p := policy(1500, 100000, 200, 50)
	p.MinRecentTurns = 4
	cp, err := Conversation(context.Background(), convInput(turns, p))
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Boundary.Omitted) == 0 {
		t.Fatalf("omitted %+v", cp.Boundary.Omitted)
	}
	// The tail 57..60 is in, in order, at the end.
	n := len(cp.Request.Messages)
	for i, seq := range []int64{57, 58, 59, 60} {
		if cp.Request.Messages[n-4+i].Content != turns[seq-1].Message.Content {
			t.Fatalf("tail message %d is not seq %d", n-4+i, seq)
		}
	}
	if cp.Ledger.Total > p.Effective() {
		t.Fatalf("total %d > %d", cp.Ledger.Total, p.Effective())
	}
}

func TestMandatoryTailTooLargeIsTyped(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	turns := transcript(r, 30, 0)
	p := policy(300, 100000, 100, 10)
	p.MinRecentTurns = 12
	_, err := Conversation(context.Background(), convInput(turns, p))
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindMandatoryExceeds || len(pe.Units) == 0 || pe.Excess <= 0 {
		t.Fatalf("err = %v", err)
	}
}

func TestBoundaryDisabledAndNoColdPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	turns := transcript(r, 6, 0)
	p := policy(100000, 100000, 10, 10)
	in := convInput(turns, p)
	in.Boundary = false
	cp, err := Conversation(context.Background(), in)
	if err != nil || cp.Boundary.Active || cp.Boundary.Reason != "disabled" {
		t.Fatalf("disabled: %+v %v", cp.Boundary, err)
	}
	in.Boundary = true // 6 messages, min_recent 12: nothing cold
	cp, err = Conversation(context.Background(), in)
	if err != nil || cp.Boundary.Active || cp.Boundary.Reason != "no_cold_prefix" {
		t.Fatalf("no prefix: %+v %v", cp.Boundary, err)
	}
}

// TestToolPairsAtomicAndCeilingNeverExceeded: random transcripts with tool
// exchanges and random policies; every pack keeps each tool result with its
// call, never sends an orphan, and the request counted independently (from
// scratch, no caches) never exceeds the ceiling. Deterministic: the same
// input renders byte-identical requests.
func TestToolPairsAtomicAndCeilingNeverExceeded(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	r := rand.New(rand.NewPCG(5, 5))
	packed := 0
	for i := range n {
		turns := transcript(r, 1+r.IntN(40), 4)
		p := policy(int64(200+r.IntN(4000)), int64(200+r.IntN(4000)), int64(r.IntN(200)), int64(r.IntN(50)))
		p.MinRecentTurns = r.IntN(8)
		in := convInput(turns, p)
		in.Boundary = r.IntN(3) > 0
		cp, err := Conversation(context.Background(), in)
		var pe *Error
		if errors.As(err, &pe) {
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		packed++
		recount := testCounter.CountRequest(&cp.Request).Total.Tokens
		if int64(recount)+p.ReserveOutputTokens+p.SafetyMarginTokens > p.Effective() {
			t.Fatalf("case %d: request %d + reserve %d + margin %d > ceiling %d", i, recount, p.ReserveOutputTokens, p.SafetyMarginTokens, p.Effective())
		}
		calls := map[string]bool{}
		for _, m := range cp.Request.Messages {
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
		}
		results := map[string]bool{}
		for _, m := range cp.Request.Messages {
			if m.ToolCallID != "" {
				if !calls[m.ToolCallID] {
					t.Fatalf("case %d: orphan tool result %s", i, m.ToolCallID)
				}
				results[m.ToolCallID] = true
			}
		}
		for id := range calls {
			// A call is dropped with its result only together: a kept call's
			// result is kept when it exists in the transcript.
			for _, tt := range turns {
				if tt.Message.ToolCallID == id && !results[id] {
					t.Fatalf("case %d: call %s kept without its result", i, id)
				}
			}
		}
		if i%50 == 0 {
			again, _ := Conversation(context.Background(), in)
			a, _ := json.Marshal(cp.Request)
			b, _ := json.Marshal(again.Request)
			if string(a) != string(b) {
				t.Fatalf("case %d: not byte-identical", i)
			}
		}
	}
	if packed < n/4 {
		t.Fatalf("only %d of %d cases packed: the generator is too tight to test anything", packed, n)
	}
}
