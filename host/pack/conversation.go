package pack

import (
	"context"
	"fmt"
	"slices"

	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Turn is one stored message as the packer sees it: its sequence and its
// rendered chat message. Content, when Cached, is the count of the content
// recorded at append for the counter's encoding, so history is never
// re-tokenized.
type Turn struct {
	Seq     int64
	Message tokenizer.Message
	Content tokenizer.Count
	Cached  bool
}

// Utilities is the value model of conversation units, declared in Prolog
// (lib/rlm_conversation_runtime.pl, context_utility/3) and read once per
// session. A message's utility is Base + PerSeq·sequence.
type Utilities struct {
	HotBase, HotPerSeq     int64 // the mandatory recent tail
	OlderBase, OlderPerSeq int64 // optional older turns
	Boundary               int64 // the cold-history boundary
}

// DefaultUtilities are upstream's: the tail 1e6+seq, older turns 1e3+seq
// (so a pack maximizes the number of older turns, newest first), the
// boundary 2e6.
func DefaultUtilities() Utilities {
	return Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}
}

// TextSection is a fixed section given as text; model sections render as
// system messages, host sections are measured only.
type TextSection struct {
	Name       string
	Visibility Visibility
	Text       string
}

// ConversationInput is one conversation pack.
type ConversationInput struct {
	ConversationID string
	// Total is the number of stored messages (the last sequence); Pending
	// is 1 when a user message is about to be appended by a turn.
	Total   int64
	Pending int64
	// Turns are the candidates, ascending by sequence: the hot tail and at
	// most Policy.MaxCandidates older turns. The caller loads them bounded.
	Turns []Turn
	// Current is the user message a turn is about to send (Pending = 1); it
	// is mandatory and rendered last.
	Current  *Turn
	Policy   Policy
	Sections []TextSection
	// Extra are explicit and warm units; their variant values are
	// tokenizer.Message. They render before the boundary.
	Extra       []Unit
	Constraints []solver.Constraint
	// Adjust are a program's changes to units by id (its pack hook).
	Adjust    []Adjustment
	Boundary  bool
	Counter   tokenizer.Counter
	Utilities Utilities
	Solver    *solver.Options
}

// Adjustment changes one unit: its utility (every variant, floored at 0)
// or makes it mandatory.
type Adjustment struct {
	ID        string
	Utility   int64
	Mandatory bool
}

// Range is an inclusive range of sequences.
type Range struct{ From, To int64 }

// BoundaryStatus says whether the cold-history boundary is in the pack and
// what it covers. Omitted lists the stored sequences the pack does not
// hold, so the boundary's "may be absent" can be checked against fact.
type BoundaryStatus struct {
	Configured, Active bool
	Reason             string // disabled, no_cold_prefix or active
	ColdThrough        int64  // sequences 1..ColdThrough may be absent
	HotStart           int64
	Projected          int64
	Tokens             int
	Omitted            []Range
}

// ConversationPack is a solved, rendered and independently counted pack.
type ConversationPack struct {
	Pack
	Units    []Unit            // the units solved, in order
	Request  tokenizer.Request // the exact provider-visible request
	Counted  tokenizer.Breakdown
	Boundary BoundaryStatus
}

// BoundaryID is the unit id of the synthetic cold-history boundary.
const BoundaryID = "managed_cold_history_boundary"

// BoundaryText is the boundary's text: deterministic for a given cold
// range, so the stable prefix stays cacheable.
func BoundaryText(conversation string, coldThrough int64) string {
	return fmt.Sprintf("Cold history boundary: conversation %s has durable history outside the guaranteed hot tail. "+
		"Sequences 1..%d may be absent from this context; the hot tail begins at sequence %d. Nothing has been deleted. "+
		"If the user refers to an earlier decision, fact, file, task or discussion that is not in context, retrieve it before answering "+
		"with a plan step on the cold history: context(input(context), search(\"query\"), r), "+
		"context(input(context), slice(Start, Length), r) or context(input(context), peek(item(Index)), r), "+
		"binding r (any lower-case name) for later steps "+
		"(JSON: {\"op\":\"context\",\"handle\":{\"ref\":\"input\",\"name\":\"context\"},\"action\":{\"type\":\"search\",\"pattern\":\"query\"},\"bind\":\"r\"}). "+
		"Refine the query when a result is truncated. Summaries may stand for old turns; the cold transcript is authoritative.",
		conversation, coldThrough, coldThrough+1)
}

// messageCost is what one message adds to a rendered request: content,
// framing and tool calls, all from the tokenizer's own rules.
func messageCost(c tokenizer.Counter, m tokenizer.Message, content *tokenizer.Count) tokenizer.Count {
	var cached func(int) (tokenizer.Count, bool)
	if content != nil {
		cached = func(int) (tokenizer.Count, bool) { return *content, true }
	}
	return c.CountRequestCached(&tokenizer.Request{Messages: []tokenizer.Message{m}}, cached).Message(0)
}

// Conversation builds the units of a conversation pack, solves them,
// renders the request and counts it again independently. The independent
// count must equal the ledger (else an error): the ledger is the request.
func Conversation(ctx context.Context, in ConversationInput) (ConversationPack, error) {
	if err := in.Policy.Validate(); err != nil {
		return ConversationPack{}, err
	}
	p := in.Policy
	var sections []Section
	var sectionMsgs []tokenizer.Message
	for _, s := range in.Sections {
		m := tokenizer.Message{Role: "system", Content: s.Text}
		sections = append(sections, Section{Name: s.Name, Visibility: s.Visibility, Count: messageCost(in.Counter, m, nil), Value: m})
		if s.Visibility == Model {
			sectionMsgs = append(sectionMsgs, m)
		}
	}
	f := in.Counter.Framing()
	priming := tokenizer.Count{Tokens: f.ReplyPriming, Method: tokenizer.Estimated, Basis: tokenizer.BasisReplyPriming}
	if f.Verified && in.Counter.Encoding() != nil {
		priming.Method = tokenizer.Exact
	}
	sections = append(sections, Section{Name: "reply_priming", Visibility: Model, Count: priming})

	units := slices.Clone(in.Extra)
	cons := slices.Clone(in.Constraints)

	// The boundary: mandatory whenever the projected conversation extends
	// beyond the guaranteed hot tail (I4).
	projected := in.Total + in.Pending
	bs := BoundaryStatus{Configured: in.Boundary, Projected: projected, Reason: "disabled"}
	if in.Boundary {
		bs.ColdThrough = projected - int64(p.MinRecentTurns)
		bs.Reason = "no_cold_prefix"
		if bs.ColdThrough > 0 {
			bs.Active, bs.Reason, bs.HotStart = true, "active", bs.ColdThrough+1
			m := tokenizer.Message{Role: "system", Content: BoundaryText(in.ConversationID, bs.ColdThrough)}
			cost := messageCost(in.Counter, m, nil)
			bs.Tokens = cost.Tokens
			units = append(units, Unit{ID: BoundaryID, Section: "cold_history_boundary", Mandatory: true, Order: projected + 1,
				Variants: []Variant{{Kind: "instruction", Count: cost, Utility: in.Utilities.Boundary, Value: m}}})
		}
	}

	// Conversation turns: the tail is mandatory; a tool-call group is
	// all-or-nothing; a tool result whose call is not a candidate is left
	// out (a provider rejects an orphan tool message).
	hotStart := in.Total - int64(p.MinRecentTurns) + 1
	callOf := map[string]string{} // tool_call_id → assistant unit id
	turnCounts := map[string]tokenizer.Count{}
	for _, t := range in.Turns {
		id := fmt.Sprintf("conversation_message_%d", t.Seq)
		if t.Message.ToolCallID != "" && callOf[t.Message.ToolCallID] == "" {
			continue
		}
		var content *tokenizer.Count
		if t.Cached {
			content = &t.Content
			turnCounts[id] = t.Content
		}
		hot := t.Seq >= hotStart
		u := in.Utilities.OlderBase + in.Utilities.OlderPerSeq*t.Seq
		if hot {
			u = in.Utilities.HotBase + in.Utilities.HotPerSeq*t.Seq
		}
		units = append(units, Unit{ID: id, Section: "conversation", Mandatory: hot, Order: t.Seq,
			Variants: []Variant{{Kind: "verbatim", Count: messageCost(in.Counter, t.Message, content), Utility: u, Value: t.Message}}})
		for _, call := range t.Message.ToolCalls {
			callOf[call.ID] = id
		}
		if t.Message.ToolCallID != "" {
			cons = append(cons, solver.SameChoice(callOf[t.Message.ToolCallID], id))
		}
	}
	if in.Current != nil {
		var content *tokenizer.Count
		if in.Current.Cached {
			content = &in.Current.Content
		}
		units = append(units, Unit{ID: "current_user_message", Section: "current", Mandatory: true, Order: projected + 2,
			Variants: []Variant{{Kind: "verbatim", Count: messageCost(in.Counter, in.Current.Message, content), Utility: in.Utilities.HotBase, Value: in.Current.Message}}})
	}

	for _, a := range in.Adjust {
		for i := range units {
			if units[i].ID != a.ID {
				continue
			}
			units[i].Mandatory = units[i].Mandatory || a.Mandatory
			vs := slices.Clone(units[i].Variants)
			for j := range vs {
				vs[j].Utility = max(0, vs[j].Utility+a.Utility)
			}
			units[i].Variants = vs
		}
	}
	pk, err := Solve(ctx, Input{Policy: p, Sections: sections, Units: units, Constraints: cons, Solver: in.Solver})
	if err != nil {
		return ConversationPack{}, err
	}
	out := ConversationPack{Pack: pk, Units: units, Boundary: bs}

	// Render: fixed sections, extra (warm, explicit), boundary, turns, in
	// unit order; count the request again, trusting only the cached
	// content counts of stored turns.
	variant := make(map[int]int, len(pk.Selected))
	for _, sel := range pk.Selected {
		variant[sel.Unit] = sel.Variant
	}
	req := tokenizer.Request{Messages: slices.Clone(sectionMsgs)}
	cached := map[int]tokenizer.Count{}
	var kept []int64
	for i, u := range units {
		vi, ok := variant[i]
		if !ok {
			continue
		}
		m, _ := u.Variants[vi].Value.(tokenizer.Message)
		if c, ok := turnCounts[u.ID]; ok {
			cached[len(req.Messages)] = c
		}
		req.Messages = append(req.Messages, m)
		if u.Section == "conversation" {
			kept = append(kept, u.Order)
		}
	}
	out.Request = req
	out.Counted = in.Counter.CountRequestCached(&req, func(i int) (tokenizer.Count, bool) {
		c, ok := cached[i]
		return c, ok
	})
	if got, want := int64(out.Counted.Total.Tokens), pk.Ledger.VisibleFixed+pk.Ledger.Selected; got != want {
		return ConversationPack{}, fmt.Errorf("pack: ledger_total_mismatch: rendered request counts %d tokens, ledger %d", got, want)
	}
	out.Boundary.Omitted = gaps(kept, in.Total)
	return out, nil
}

// gaps returns the ranges of 1..total missing from kept (ascending), in
// O(len(kept)).
func gaps(kept []int64, total int64) []Range {
	var out []Range
	next := int64(1)
	for _, k := range kept {
		if k > next {
			out = append(out, Range{next, k - 1})
		}
		next = k + 1
	}
	if next <= total {
		out = append(out, Range{next, total})
	}
	return out
}
