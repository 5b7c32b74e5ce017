package pack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

// testUtilities and testBoundary are lib's defaults.
var testUtilities = Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}

const testBoundary = "Cold history boundary: conversation {conversation} has durable history outside the guaranteed hot tail. " +
	"Sequences 1..{cold_through} may be absent from this context; the hot tail begins at sequence {hot_start}."

func convInput(turns []Turn, p Policy) ConversationInput {
	return ConversationInput{ConversationID: "c1", Total: int64(len(turns)), Turns: turns, Policy: p,
		Boundary: true, BoundaryTemplates: []string{testBoundary}, Counter: testCounter, Utilities: testUtilities,
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
	if !strings.Contains(cp.Request.Messages[1].Content, "conversation c1 has durable history") ||
		!strings.Contains(cp.Request.Messages[1].Content, "Sequences 1..15 may be absent from this context; the hot tail begins at sequence 16.") {
		t.Fatalf("boundary text %q", cp.Request.Messages[1].Content)
	}
}

// TestCoherentWindowUnderTightCap is the default window: 40 turns of 60–120
// tokens under a 2,000-token cap keep the hot tail plus the longest run of
// whole exchanges right before it that fits — the omitted history is one
// prefix, the first kept older turn is a question, and the next older
// exchange would not have fit.
func TestCoherentWindowUnderTightCap(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var turns []Turn
	for seq := int64(1); seq <= 40; seq++ {
		role := map[bool]string{true: "user", false: "assistant"}[seq%2 == 1]
		m := tokenizer.Message{Role: role, Content: strings.Repeat("word ", 60+r.IntN(61))}
		turns = append(turns, Turn{Seq: seq, Message: m, Content: testCounter.Count(m.Content), Cached: true})
	}
	p := policy(2000, 100000, 0, 0)
	p.MinRecentTurns = 4
	cp, err := Conversation(context.Background(), convInput(turns, p))
	if err != nil {
		t.Fatal(err)
	}
	om := cp.Boundary.Omitted
	if len(om) != 1 || om[0].From != 1 {
		t.Fatalf("omitted %+v, want one prefix", om)
	}
	first := om[0].To + 1
	if turns[first-1].Message.Role != "user" {
		t.Fatalf("the window starts at %d, an answer without its question", first)
	}
	for seq := first; seq <= 40; seq++ {
		if !slices.ContainsFunc(cp.Pack.Selected, func(s Selection) bool { return cp.Units[s.Unit].Order == seq }) {
			t.Fatalf("seq %d missing from a window starting at %d", seq, first)
		}
	}
	// The exchange before the window (first-2, first-1) would not fit.
	next := int64(0)
	for _, seq := range []int64{first - 2, first - 1} {
		next += int64(messageCost(testCounter, turns[seq-1].Message, &turns[seq-1].Content).Tokens)
	}
	if cp.Ledger.Remaining >= next {
		t.Fatalf("%d tokens remain, enough for the exchange at %d (%d tokens)", cp.Ledger.Remaining, first-2, next)
	}

	// Upstream's model keeps more, smaller turns wherever they are.
	p.Window = MostTurns
	up, err := Conversation(context.Background(), convInput(turns, p))
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Pack.Selected) < len(cp.Pack.Selected) {
		t.Fatalf("most_turns kept %d units, contiguous %d", len(up.Pack.Selected), len(cp.Pack.Selected))
	}
}

// TestOrphanToolResultIsLeftOutAndSaid: a tool result whose call is not
// a candidate (an older store, a lenient import) is left out, hot or not,
// and the boundary says which and why: the conversation stays usable.
func TestOrphanToolResultIsLeftOutAndSaid(t *testing.T) {
	turns := []Turn{
		{Seq: 5, Message: tokenizer.Message{Role: "tool", ToolCallID: "call_1", Content: "42"}},
		{Seq: 6, Message: tokenizer.Message{Role: "user", Content: "thanks"}},
	}
	p := policy(100000, 100000, 10, 10)
	p.MinRecentTurns = 2
	in := convInput(turns, p)
	in.Total = 6
	orphaned, err := Conversation(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []LeftOut{{Seq: 5, Reason: ReasonOrphanToolResult}}; !slices.Equal(orphaned.Boundary.LeftOut, want) ||
		len(orphaned.Request.Messages) != 3 || orphaned.Request.Messages[2].Content != "thanks" {
		t.Fatalf("left out %v, request %+v", orphaned.Boundary.LeftOut, orphaned.Request.Messages)
	}
	// With the call among the candidates (the loader moves HotStart back
	// to it), the group is kept whole.
	call := Turn{Seq: 4, Message: tokenizer.Message{Role: "assistant", ToolCalls: []tokenizer.ToolCall{{ID: "call_1", Type: "function",
		Function: tokenizer.FunctionCall{Name: "f", Arguments: "{}"}}}}}
	in.Turns = append([]Turn{call}, turns...)
	in.HotStart = 4
	cp, err := Conversation(context.Background(), in)
	if err != nil || len(cp.Request.Messages) != 5 || cp.Boundary.HotStart != 4 || cp.Boundary.LeftOut != nil {
		t.Fatalf("pack %+v: %v", cp.Boundary, err)
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
		if r.IntN(2) == 0 {
			p.Window = MostTurns
		}
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
		if om := cp.Boundary.Omitted; p.Window == Contiguous && len(om) > 0 {
			if len(om) > 1 || om[0].From != 1 {
				t.Fatalf("case %d: contiguous window omitted %+v, not one prefix", i, om)
			}
			if first := om[0].To + 1; first <= int64(len(turns)) && first < int64(len(turns))-int64(p.MinRecentTurns)+1 &&
				turns[first-1].Message.Role != "user" {
				t.Fatalf("case %d: the older window starts at %d with a %s message", i, first, turns[first-1].Message.Role)
			}
		}
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

// TestOversizedHotMessageIsSentAsAnExcerpt: a hot message too large for
// the ceiling is sent as its bounded excerpt with the note saying where
// the rest is, instead of failing the pack; with room it is sent whole.
func TestOversizedHotMessageIsSentAsAnExcerpt(t *testing.T) {
	huge := strings.Repeat("the lease protocol needs fencing tokens. ", 750) // ~30,000 characters
	turns := []Turn{
		{Seq: 1, Message: tokenizer.Message{Role: "user", Content: "explain leases"}},
		{Seq: 2, Message: tokenizer.Message{Role: "assistant", Content: huge}, Content: testCounter.Count(huge), Cached: true},
		{Seq: 3, Message: tokenizer.Message{Role: "user", Content: "shorter please"}},
	}
	p := policy(3000, 100000, 500, 100)
	p.MinRecentTurns = 3
	in := convInput(turns, p)
	in.Utilities.ExcerptTokens, in.Utilities.ExcerptTemplate = 1024, "[message {seq}: {shown} of {total} tokens; item {item}]"
	cp, err := Conversation(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var sent string
	for _, m := range cp.Request.Messages {
		if m.Role == "assistant" {
			sent = m.Content
		}
	}
	total := testCounter.Count(huge).Tokens
	if !strings.HasPrefix(sent, "the lease protocol") || !strings.Contains(sent, fmt.Sprintf(" of %d tokens; item 1]", total)) || len(sent) >= len(huge) {
		t.Fatalf("sent %d characters ending %q", len(sent), sent[max(0, len(sent)-60):])
	}
	in.Policy = policy(100000, 100000, 500, 100)
	in.Policy.MinRecentTurns = 3
	if cp, err = Conversation(context.Background(), in); err != nil || cp.Request.Messages[2].Content != huge {
		t.Fatalf("with room the message is not sent whole: %v", err)
	}
}

// TestOversizedToolResultKeepsItsCall: an excerpt of a huge tool result
// still answers its call, which is sent with it.
func TestOversizedToolResultKeepsItsCall(t *testing.T) {
	huge := strings.Repeat("row 42 ok; ", 3000)
	turns := []Turn{
		{Seq: 1, Message: tokenizer.Message{Role: "user", Content: "dump the table"}},
		{Seq: 2, Message: tokenizer.Message{Role: "assistant", ToolCalls: []tokenizer.ToolCall{{ID: "c1", Type: "function",
			Function: tokenizer.FunctionCall{Name: "dump", Arguments: "{}"}}}}},
		{Seq: 3, Message: tokenizer.Message{Role: "tool", ToolCallID: "c1", Content: huge}},
	}
	p := policy(3000, 100000, 500, 100)
	p.MinRecentTurns = 3
	in := convInput(turns, p)
	in.Utilities.ExcerptTokens, in.Utilities.ExcerptTemplate = 512, "[item {item}]"
	cp, err := Conversation(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	last := cp.Request.Messages[len(cp.Request.Messages)-1]
	if prev := cp.Request.Messages[len(cp.Request.Messages)-2]; len(prev.ToolCalls) != 1 || last.ToolCallID != "c1" || !strings.HasSuffix(last.Content, "[item 2]") {
		t.Fatalf("request ends %+v, %q", prev, last.Content[max(0, len(last.Content)-20):])
	}
}

// TestNoReplyNote: a user message that got no reply is followed by the
// note (an assistant message, its own ledger stage) when it is sent, and
// the note goes with it: never one without the other, under every window.
func TestNoReplyNote(t *testing.T) {
	long := strings.Repeat("detail ", 2000)
	turns := []Turn{
		{Seq: 1, Message: tokenizer.Message{Role: "user", Content: "lost question " + long}, NoReply: true},
		{Seq: 2, Message: tokenizer.Message{Role: "user", Content: "new question"}},
		{Seq: 3, Message: tokenizer.Message{Role: "assistant", Content: "answer"}},
		{Seq: 4, Message: tokenizer.Message{Role: "user", Content: "and now?"}},
	}
	for _, w := range []Window{Contiguous, MostTurns, Stable} {
		for _, room := range []int64{100000, 1500} { // all of it fits; message 1 does not
			p := policy(room, 100000, 100, 10)
			p.MinRecentTurns, p.Window = 3, w
			in := convInput(turns, p)
			in.Utilities.NoReplyTemplate = "[no reply to message {seq}]"
			cp, err := Conversation(context.Background(), in)
			if err != nil {
				t.Fatalf("%s, %d: %v", w, room, err)
			}
			var got []string
			for _, m := range cp.Request.Messages {
				if m.Role != "system" {
					got = append(got, m.Role+":"+strings.Fields(m.Content)[0])
				}
			}
			sent := strings.Join(got, " ")
			want := "user:new assistant:answer user:and"
			if strings.HasPrefix(sent, "user:lost") {
				want = "user:lost assistant:[no user:new assistant:answer user:and"
			}
			if sent != want || w != Stable && (room == 100000) != strings.HasPrefix(sent, "user:lost") {
				t.Errorf("%s, %d tokens: %s", w, room, sent)
			}
		}
	}
}

// TestBoundaryFallsBackToShorterForms: the pack sends the boundary's
// fullest form whenever everything mandatory fits with it, even where a
// shorter form would leave room for an older turn, and otherwise the first
// shorter form that fits; when none fits, the error names the boundary.
func TestBoundaryFallsBackToShorterForms(t *testing.T) {
	var turns []Turn
	for seq := int64(1); seq <= 6; seq++ {
		role := map[bool]string{true: "user", false: "assistant"}[seq%2 == 1]
		m := tokenizer.Message{Role: role, Content: fmt.Sprintf("turn %d: %s", seq, strings.Repeat("word ", 50))}
		turns = append(turns, Turn{Seq: seq, Message: m, Content: testCounter.Count(m.Content), Cached: true})
	}
	forms := []string{testBoundary + strings.Repeat(" Search before answering.", 60),
		"Sequences 1..{cold_through} may be absent; search them.", "Turns before {hot_start} omitted"}
	pack := func(capacity int64, forms ...string) (ConversationPack, error) {
		p := policy(capacity, 100000, 10, 5)
		p.MinRecentTurns = 1
		in := convInput(turns, p)
		in.BoundaryTemplates = forms
		return Conversation(context.Background(), in)
	}
	need := func(form string) int64 { // the smallest cap with which the hot tail and form fit
		lo, hi := int64(1), int64(100000)
		for lo < hi {
			if mid := (lo + hi) / 2; func() bool { _, err := pack(mid, form); return err == nil }() {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo
	}
	full, compact, minimal := need(forms[0]), need(forms[1]), need(forms[2])
	older := messageCost(testCounter, turns[4].Message, nil).Tokens
	if !(minimal < compact && full-compact > int64(older)) {
		t.Fatalf("forms need %d, %d, %d tokens; an older turn %d", full, compact, minimal, older)
	}
	for _, c := range []struct {
		capacity int64
		form     int
	}{{full + int64(older) - 1, 1}, {full, 1}, {full - 1, 2}, {compact, 2}, {compact - 1, 3}, {minimal, 3}} {
		cp, err := pack(c.capacity, forms...)
		if err != nil {
			t.Fatalf("cap %d: %v", c.capacity, err)
		}
		want := RenderBoundary(forms[c.form-1], "c1", 5)
		if cp.Boundary.Form != c.form || cp.Request.Messages[1].Content != want {
			t.Fatalf("cap %d: form %d, want %d; sent %.60q", c.capacity, cp.Boundary.Form, c.form, cp.Request.Messages[1].Content)
		}
		if c.form == 1 && len(cp.Request.Messages) != 3 { // system, boundary, the hot turn: no older turn bought with a shorter form
			t.Fatalf("cap %d: %d messages", c.capacity, len(cp.Request.Messages))
		}
	}
	_, err := pack(minimal-1, forms...)
	var pe *Error
	if !errors.As(err, &pe) || !slices.Contains(pe.Units, BoundaryID) {
		t.Fatalf("below the shortest form: %v", err)
	}
	if _, err := pack(full, forms[0], ""); err == nil {
		t.Fatal("an empty form was accepted")
	}
}
