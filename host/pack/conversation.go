package pack

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
// (lib's context_utility/3) and read once per session. A message's utility
// is Base + PerSeq·sequence.
type Utilities struct {
	HotBase, HotPerSeq     int64 // the mandatory recent tail
	OlderBase, OlderPerSeq int64 // optional older turns
	Boundary               int64 // the cold-history boundary
}

// TextSection is a fixed section given as text; model sections render as
// messages of Role ("" is system), host sections are measured only.
type TextSection struct {
	Name       string
	Visibility Visibility
	Text       string
	Role       string
	// Content, when set, is the count of Text under the pack's counter
	// (a caller's cache: the same sections recur in every request).
	Content tokenizer.Count
	// Category groups sections under one of Policy.CategoryLimits
	// (instructions, skills).
	Category string
	// ToolCalls and ToolCallID make the section an assistant's tool calls
	// or a tool's result (a direct turn's rounds, in the trailer): fixed,
	// so each call stays with its result or the request does not fit.
	ToolCalls  []tokenizer.ToolCall
	ToolCallID string
}

// Message is the section as it renders.
func (s TextSection) Message() tokenizer.Message {
	role := s.Role
	if role == "" {
		role = tokenizer.RoleSystem
	}
	return tokenizer.Message{Role: role, Content: s.Text, ToolCalls: s.ToolCalls, ToolCallID: s.ToolCallID}
}

// ConversationInput is one conversation pack.
type ConversationInput struct {
	ConversationID string
	// Total is the number of stored messages (the last sequence).
	Total int64
	// HotStart is the first sequence of the mandatory hot tail. The loader
	// sets it to Total-MinRecentTurns+1, moved back so the tail never
	// starts inside a tool-call group. Zero means Total-MinRecentTurns+1.
	HotStart int64
	// Turns are the candidates, ascending by sequence: the hot tail and at
	// most Policy.MaxCandidates older turns. The caller loads them bounded.
	Turns    []Turn
	Policy   Policy
	Sections []TextSection
	// Trailer are fixed sections rendered after the conversation (a turn's
	// goal for the planner, a plan step's prompt), charged like Sections.
	Trailer []TextSection
	// Tools and Format are the request's tool definitions and response
	// format, sent with it and charged as the fixed stages tool_definitions
	// and response_format by the tokenizer's own rules.
	Tools  []tokenizer.Tool
	Format *tokenizer.ResponseFormat
	// Extra are explicit and warm units; their variant values are the
	// tokenizer.Message each renders, charged at its full cost (framing
	// included). A variant's Count, when set, is its content's count under
	// Counter (cached at publish), else the content is counted here. They
	// render before the boundary.
	Extra       []Unit
	Constraints []solver.Constraint
	// Adjust are a program's changes to units by id (its pack hook).
	Adjust []Adjustment
	// Boundary asks for the cold-history boundary whenever history may be
	// cold; BoundaryTemplate is its text (see [RenderBoundary]).
	Boundary         bool
	BoundaryTemplate string
	Counter          tokenizer.Counter
	Utilities        Utilities
	Solver           *solver.Options
}

// Adjustment changes one unit: its utility (every variant, floored at 0)
// or makes it mandatory.
type Adjustment struct {
	ID        string
	Utility   int64
	Mandatory bool
}

// Range is an inclusive range of sequences.
type Range struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

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

// KindOrphanToolResult is the error kind of a mandatory tool result whose
// call is not in the pack's candidates: sending it alone would be rejected
// by the provider, and dropping it would break the hot tail's promise.
const KindOrphanToolResult = "orphan_tool_result"

// RenderBoundary fills a boundary template: {conversation} is the
// conversation id, {cold_through} the last sequence that may be absent and
// {hot_start} the first sequence of the hot tail. The text is a pure
// function of them, so the request prefix stays cacheable.
func RenderBoundary(template, conversation string, coldThrough int64) string {
	return strings.NewReplacer("{conversation}", conversation,
		"{cold_through}", strconv.FormatInt(coldThrough, 10),
		"{hot_start}", strconv.FormatInt(coldThrough+1, 10)).Replace(template)
}

// UnitID is the unit id of the stored message at seq.
func UnitID(seq int64) string { return "conversation_message_" + strconv.FormatInt(seq, 10) }

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
	hotStart := in.HotStart
	if hotStart == 0 {
		hotStart = in.Total - int64(p.MinRecentTurns) + 1
	}
	hotStart = max(1, hotStart)
	var sections []Section
	var sectionMsgs, trailerMsgs []tokenizer.Message
	var sectionCounts, trailerCounts []*tokenizer.Count // cached content counts, by message
	for i, s := range append(slices.Clone(in.Sections), in.Trailer...) {
		m := s.Message()
		var content *tokenizer.Count
		if s.Content.Method != 0 {
			content = &s.Content
		}
		sections = append(sections, Section{Name: s.Name, Visibility: s.Visibility, Count: messageCost(in.Counter, m, content), Value: m})
		switch {
		case s.Visibility != Model:
		case i < len(in.Sections):
			sectionMsgs, sectionCounts = append(sectionMsgs, m), append(sectionCounts, content)
		default:
			trailerMsgs, trailerCounts = append(trailerMsgs, m), append(trailerCounts, content)
		}
	}
	f := in.Counter.Framing()
	priming := tokenizer.Count{Tokens: f.ReplyPriming, Method: tokenizer.Estimated, Basis: tokenizer.BasisReplyPriming}
	if f.Verified && in.Counter.Encoding() != nil {
		priming.Method = tokenizer.Exact
	}
	sections = append(sections, Section{Name: "reply_priming", Visibility: Model, Count: priming})
	sections = append(sections, requestExtras(in.Counter, in.Tools, in.Format)...)
	if err := checkCategories(p.CategoryLimits, append(slices.Clone(in.Sections), in.Trailer...), sections); err != nil {
		return ConversationPack{}, err
	}

	units := make([]Unit, len(in.Extra))
	for i, u := range in.Extra {
		u.Variants = slices.Clone(u.Variants)
		for j, v := range u.Variants {
			m, _ := v.Value.(tokenizer.Message)
			var content *tokenizer.Count
			if v.Count.Method != 0 {
				content = &v.Count
			}
			u.Variants[j].Count = messageCost(in.Counter, m, content)
		}
		units[i] = u
	}
	cons := slices.Clone(in.Constraints)

	// The boundary: mandatory whenever the conversation extends beyond the
	// guaranteed hot tail (I4).
	bs := BoundaryStatus{Configured: in.Boundary, Projected: in.Total, Reason: "disabled"}
	if in.Boundary {
		bs.ColdThrough = hotStart - 1
		bs.Reason = "no_cold_prefix"
		if bs.ColdThrough > 0 {
			bs.Active, bs.Reason, bs.HotStart = true, "active", hotStart
			m := tokenizer.Message{Role: "system", Content: RenderBoundary(in.BoundaryTemplate, in.ConversationID, bs.ColdThrough)}
			cost := messageCost(in.Counter, m, nil)
			bs.Tokens = cost.Tokens
			units = append(units, Unit{ID: BoundaryID, Section: "cold_history_boundary", Mandatory: true, Order: in.Total + 1,
				Variants: []Variant{{Kind: "instruction", Count: cost, Utility: in.Utilities.Boundary, Value: m}}})
		}
	}

	turnUnits, turnCons, turnCounts, err := conversationUnits(in, hotStart)
	if err != nil {
		return ConversationPack{}, err
	}
	units = append(units, turnUnits...)
	cons = append(cons, turnCons...)

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
	pk, err := Solve(ctx, Input{Policy: p, Sections: sections, Units: units, Constraints: relevant(cons, units), Solver: in.Solver})
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
	req := tokenizer.Request{Messages: slices.Clone(sectionMsgs), Tools: in.Tools, ResponseFormat: in.Format}
	cached := map[int]tokenizer.Count{}
	for i, c := range sectionCounts {
		if c != nil {
			cached[i] = *c
		}
	}
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
	for i, c := range trailerCounts {
		if c != nil {
			cached[len(req.Messages)+i] = *c
		}
	}
	req.Messages = append(req.Messages, trailerMsgs...)
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

// conversationUnits makes one unit per candidate turn. The hot tail is
// mandatory. A tool-call group (the assistant message and its results) is
// all-or-nothing; an optional result whose call is not a candidate is left
// out (a provider rejects an orphan tool message), a mandatory one fails
// closed. Under the Contiguous window each older exchange is atomic and
// requires the next one, so what is kept is a suffix of whole exchanges.
func conversationUnits(in ConversationInput, hotStart int64) ([]Unit, []solver.Constraint, map[string]tokenizer.Count, error) {
	var units []Unit
	var cons []solver.Constraint
	callOf := map[string]string{} // tool_call_id → assistant unit id
	counts := map[string]tokenizer.Count{}
	exchange, prevExchange := "", "" // first unit of the current and previous older exchange
	for _, t := range in.Turns {
		id := UnitID(t.Seq)
		hot := t.Seq >= hotStart
		if !hot && in.Policy.Window == Contiguous && exchange == "" && t.Message.Role != "user" {
			continue // the candidates start inside an exchange whose question is not one of them
		}
		if t.Message.ToolCallID != "" && callOf[t.Message.ToolCallID] == "" {
			if hot {
				return nil, nil, nil, &Error{Kind: KindOrphanToolResult, Units: []string{id}}
			}
			continue
		}
		var content *tokenizer.Count
		if t.Cached {
			content = &t.Content
			counts[id] = t.Content
		}
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
		if hot || in.Policy.Window != Contiguous {
			continue
		}
		switch {
		case t.Message.Role == "user":
			prevExchange, exchange = exchange, id
			if prevExchange != "" {
				cons = append(cons, solver.Requires(prevExchange, exchange))
			}
		case t.Message.ToolCallID == "":
			cons = append(cons, solver.SameChoice(exchange, id))
		}
	}
	return units, cons, counts, nil
}

// checkCategories fails closed when the sections of a category (tools:
// the tool definitions) take more than its limit.
func checkCategories(limits map[string]int64, texts []TextSection, sections []Section) error {
	if len(limits) == 0 {
		return nil
	}
	used := map[string]int64{}
	for i, s := range sections {
		switch {
		case i < len(texts):
			used[texts[i].Category] += int64(s.Count.Tokens)
		case s.Name == "tool_definitions":
			used["tools"] += int64(s.Count.Tokens)
		}
	}
	cats := make([]string, 0, len(limits))
	for cat := range limits {
		cats = append(cats, cat)
	}
	slices.Sort(cats)
	for _, cat := range cats {
		if limit := limits[cat]; limit > 0 && used[cat] > limit {
			return &Error{Kind: KindCategoryExceeds, Units: []string{cat}, Base: used[cat], Effective: limit, Excess: used[cat] - limit}
		}
	}
	return nil
}

// requestExtras are the fixed stages of a request's tool definitions and
// response format.
func requestExtras(c tokenizer.Counter, tools []tokenizer.Tool, format *tokenizer.ResponseFormat) []Section {
	if len(tools) == 0 && format == nil {
		return nil
	}
	b := c.CountRequest(&tokenizer.Request{Tools: tools, ResponseFormat: format})
	sum := map[string]tokenizer.Count{}
	for _, st := range b.Stages {
		name := map[tokenizer.StageKind]string{tokenizer.StageTool: "tool_definitions", tokenizer.StageToolsEnd: "tool_definitions",
			tokenizer.StageResponseFormat: "response_format"}[st.Kind]
		if name == "" {
			continue
		}
		n, seen := sum[name]
		n.Tokens += st.Count.Tokens
		if !seen || st.Count.Method == tokenizer.Estimated {
			n.Method, n.Basis, n.Encoding = st.Count.Method, st.Count.Basis, st.Count.Encoding
		}
		sum[name] = n
	}
	var out []Section
	for _, name := range []string{"tool_definitions", "response_format"} {
		if n, ok := sum[name]; ok {
			out = append(out, Section{Name: name, Visibility: Model, Count: n})
		}
	}
	return out
}

// relevant drops the exclusions that name a unit not in the pack (a warm
// summary's raw messages beyond the candidates): they hold whatever is
// chosen. Every other constraint is kept, for the solver to validate.
func relevant(cons []solver.Constraint, units []Unit) []solver.Constraint {
	ids := make(map[string]bool, len(units))
	for _, u := range units {
		ids[u.ID] = true
	}
	return slices.DeleteFunc(cons, func(c solver.Constraint) bool {
		return c.Kind == solver.KindExcludes && (!ids[c.A] || !ids[c.B])
	})
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
