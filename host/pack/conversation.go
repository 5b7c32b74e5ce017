package pack

import (
	"context"
	"errors"
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
	// NoReply marks a user message that got no reply: its turn failed or
	// was interrupted, and another user message follows it. The pack sends
	// Utilities.NoReplyTemplate after it, with it or not at all, so the
	// model is told rather than shown two user messages in a row.
	NoReply bool
}

// Utilities is the value model of conversation units, declared in Prolog
// (lib's context_utility/3) and read once per session. A message's utility
// is Base + PerSeq·sequence.
type Utilities struct {
	HotBase, HotPerSeq     int64 // the mandatory recent tail (and pinned messages)
	OlderBase, OlderPerSeq int64 // optional older turns
	Boundary               int64 // the cold-history boundary
	// ExcerptTokens, when positive, offers a hot message longer than it a
	// second representation: its first ExcerptTokens tokens and the note
	// ExcerptTemplate (see [RenderExcerptNote]), so a message too large for
	// the ceiling never fails every later pack (lib's context_excerpt/2).
	ExcerptTokens   int
	ExcerptTemplate string
	// ToolExcerptPercent, when positive, bounds each tool result of a
	// direct turn's rounds: one longer than this percent of the room under
	// the ceiling (after the output reserve and the safety margin) is sent
	// as its first that many tokens and the note ToolExcerptTemplate (see
	// [RenderToolExcerptNote]); the stored result stays whole (lib's
	// context_tool_excerpt/2).
	ToolExcerptPercent  int
	ToolExcerptTemplate string
	// PinnedRoles are the roles whose messages are pinned by default
	// (lib's context_pinned_role/1): the loader reads them by role and
	// gives them as ConversationInput.Pinned.
	PinnedRoles []string
	// NoReplyTemplate is the assistant note sent after a user message that
	// got no reply ([Turn].NoReply; see [RenderNoReply]; lib's
	// context_no_reply_note/1). Empty sends none.
	NoReplyTemplate string
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
	// Reasoning and ReasoningSignature are an assistant's signed reasoning
	// before its tool calls, sent back with them (Anthropic's thinking).
	Reasoning, ReasoningSignature string
}

// Message is the section as it renders.
func (s TextSection) Message() tokenizer.Message {
	role := s.Role
	if role == "" {
		role = tokenizer.RoleSystem
	}
	return tokenizer.Message{Role: role, Content: s.Text, ToolCalls: s.ToolCalls, ToolCallID: s.ToolCallID,
		Reasoning: s.Reasoning, ReasoningSignature: s.ReasoningSignature}
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
	Turns []Turn
	// Pinned are messages that are always in the request, first after the
	// fixed sections, in sequence order: never summarized, never dropped
	// for an older turn (the conversation's own system messages, and what
	// a program pinned). They are not among Turns. When they cannot fit,
	// the pack fails with [KindPinnedExceeds] naming them.
	Pinned   []Turn
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
	// cold; BoundaryTemplates are its forms, fullest first (see
	// [RenderBoundary]): the pack sends the first with which the pack fits,
	// so a tight window gets a terse boundary rather than none or an error.
	Boundary          bool
	BoundaryTemplates []string
	Counter           tokenizer.Counter
	Utilities         Utilities
	Solver            *solver.Options
	// StableStart is, under window(stable), the first sequence the
	// previous request's window held (its boundary's ColdThrough + 1); 0
	// when there was none.
	StableStart int64

	stableFrom int64 // set by stableConversation: the boundary says 1..stableFrom-1
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
	Form               int // which of the templates was sent: 1 the fullest
	Omitted            []Range
	// Stable says, under window(stable), whether the window kept its start
	// (kept: the request extends the previous one) or moved it (moved: the
	// kept start no longer fit, or there was none; the prefix breaks here).
	Stable string
	// LeftOut are the stored messages the pack could not send whatever the
	// room, and why (ascending): a tool result whose call is not in the
	// candidates (orphan_tool_result) would be rejected by the provider.
	LeftOut []LeftOut
}

// LeftOut is a message a pack could not send, and why.
type LeftOut struct {
	Seq    int64  `json:"seq"`
	Reason string `json:"reason"`
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

// ReasonOrphanToolResult is why a tool result whose call is not in the
// pack's candidates is left out: sent alone it would be rejected by the
// provider, and failing the pack would make the conversation unusable.
const ReasonOrphanToolResult = "orphan_tool_result"

// KindPinnedExceeds is the error kind of pinned messages that do not fit
// beside the fixed sections, the output reserve and the safety margin.
const KindPinnedExceeds = "pinned_context_exceeds_limit"

// PinnedSection is the section of pinned message units (their own ledger
// stages).
const PinnedSection = "pinned"

// NoReplySection is the section of the notes that follow user messages
// that got no reply ([Turn].NoReply).
const NoReplySection = "no_reply"

// NoReplyID is the unit id of the note after the message at seq.
func NoReplyID(seq int64) string { return "no_reply_after_message_" + strconv.FormatInt(seq, 10) }

// RenderNoReply fills a no-reply note template: {seq} is the sequence of
// the message that got no reply.
func RenderNoReply(template string, seq int64) string {
	return strings.ReplaceAll(template, "{seq}", strconv.FormatInt(seq, 10))
}

// RenderBoundary fills a boundary template: {conversation} is the
// conversation id, {cold_through} the last sequence that may be absent and
// {hot_start} the first sequence of the hot tail. The text is a pure
// function of them, so the request prefix stays cacheable.
func RenderBoundary(template, conversation string, coldThrough int64) string {
	return strings.NewReplacer("{conversation}", conversation,
		"{cold_through}", strconv.FormatInt(coldThrough, 10),
		"{hot_start}", strconv.FormatInt(coldThrough+1, 10)).Replace(template)
}

// RenderExcerptNote fills an excerpt's note template: {seq} is the
// message's sequence, {item} its index in the cold-history handle (seq-1),
// {shown} and {total} the tokens of the excerpt and of the whole content.
func RenderExcerptNote(template string, seq int64, shown, total int) string {
	return strings.NewReplacer("{seq}", strconv.FormatInt(seq, 10), "{item}", strconv.FormatInt(seq-1, 10),
		"{shown}", strconv.Itoa(shown), "{total}", strconv.Itoa(total)).Replace(template)
}

// excerpt is the bounded representation of a text message whose content
// has more than maxTokens tokens: the longest prefix (whole runes) of at
// most maxTokens tokens, found by bisection over at most 32 runes a token
// (so a huge message costs a bounded count), then the note.
func excerpt(c tokenizer.Counter, t Turn, maxTokens int, template string) (tokenizer.Message, bool) {
	m := t.Message
	total := t.Content.Tokens
	if !t.Cached {
		total = c.Count(m.Content).Tokens
	}
	if maxTokens <= 0 || len(m.Parts) > 0 || total <= maxTokens {
		return m, false
	}
	prefix, shown := Prefix(c, m.Content, maxTokens)
	m.Content = prefix + "\n" + RenderExcerptNote(template, t.Seq, shown, total)
	return m, true
}

// Prefix is the longest prefix (whole runes) of text of at most
// maxTokens tokens, and its tokens, found by bisection over at most 32
// runes a token (so a huge text costs a bounded count).
func Prefix(c tokenizer.Counter, text string, maxTokens int) (string, int) {
	runes := []rune(text[:min(len(text), 4*32*maxTokens)]) // a rune is at most 4 bytes
	lo, hi := 0, min(len(runes), 32*maxTokens)             // the prefix of lo runes fits; none longer than hi is tried
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.Count(string(runes[:mid])).Tokens <= maxTokens {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	prefix := string(runes[:lo])
	return prefix, c.Count(prefix).Tokens
}

// RenderToolExcerptNote fills the note after an excerpt of a tool's
// result in a direct turn's round: {tool} is the function called,
// {shown} and {total} the tokens of the excerpt and of the whole result.
func RenderToolExcerptNote(template, tool string, shown, total int) string {
	return strings.NewReplacer("{tool}", tool, "{shown}", strconv.Itoa(shown), "{total}", strconv.Itoa(total)).Replace(template)
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
// When the boundary is part of what does not fit, the pack is made again
// with its next form.
func Conversation(ctx context.Context, in ConversationInput) (ConversationPack, error) {
	forms := in.BoundaryTemplates
	if in.Boundary && (len(forms) == 0 || slices.Contains(forms, "")) {
		return ConversationPack{}, &FieldError{Field: "boundary_template", Value: "", Msg: "must be set when the boundary is on"}
	}
	for form := 1; ; form++ {
		if len(forms) > 0 {
			in.BoundaryTemplates = forms[form-1 : form]
		}
		cp, err := conversation(ctx, in)
		var pe *Error
		if form >= len(forms) || !errors.As(err, &pe) || !slices.Contains(pe.Units, BoundaryID) {
			if cp.Boundary.Active {
				cp.Boundary.Form = form
			}
			return cp, err
		}
	}
}

// conversation is Conversation with one boundary form.
func conversation(ctx context.Context, in ConversationInput) (ConversationPack, error) {
	if err := in.Policy.Validate(); err != nil {
		return ConversationPack{}, err
	}
	p := in.Policy
	hotStart := in.HotStart
	if hotStart == 0 {
		hotStart = in.Total - int64(p.MinRecentTurns) + 1
	}
	hotStart = max(1, hotStart)
	if p.Window == Stable {
		return stableConversation(ctx, in, hotStart)
	}
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

	units, turnCounts := pinnedUnits(in)
	if err := checkPinned(p, sections, units); err != nil {
		return ConversationPack{}, err
	}
	for _, u := range in.Extra {
		u.Variants = slices.Clone(u.Variants)
		for j, v := range u.Variants {
			m, _ := v.Value.(tokenizer.Message)
			var content *tokenizer.Count
			if v.Count.Method != 0 {
				content = &v.Count
			}
			u.Variants[j].Count = messageCost(in.Counter, m, content)
		}
		units = append(units, u)
	}
	cons := slices.Clone(in.Constraints)

	// The boundary: mandatory whenever the conversation extends beyond the
	// guaranteed hot tail (I4).
	bs := BoundaryStatus{Configured: in.Boundary, Projected: in.Total, Reason: "disabled"}
	if in.stableFrom > 0 {
		bs.ColdThrough = in.stableFrom - 1 // window(stable) remembers its start here, boundary or not
	}
	if in.Boundary {
		bs.ColdThrough = hotStart - 1
		if in.stableFrom > 0 {
			bs.ColdThrough = in.stableFrom - 1
		}
		bs.Reason = "no_cold_prefix"
		if bs.ColdThrough > 0 {
			bs.Active, bs.Reason, bs.HotStart = true, "active", hotStart
			m := tokenizer.Message{Role: "system", Content: RenderBoundary(in.BoundaryTemplates[0], in.ConversationID, bs.ColdThrough)}
			cost := messageCost(in.Counter, m, nil)
			bs.Tokens = cost.Tokens
			units = append(units, Unit{ID: BoundaryID, Section: "cold_history_boundary", Mandatory: true, Order: in.Total + 1,
				Variants: []Variant{{Kind: "instruction", Count: cost, Utility: in.Utilities.Boundary, Value: m}}})
		}
	}

	turnUnits, turnCons, leftOut := conversationUnits(in, hotStart, turnCounts)
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
	bs.LeftOut = leftOut
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
		if c, ok := turnCounts[u.ID]; ok && u.Variants[vi].Kind == "verbatim" {
			cached[len(req.Messages)] = c
		}
		req.Messages = append(req.Messages, m)
		if u.Section == "conversation" || u.Section == PinnedSection {
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
	slices.Sort(kept) // pinned messages render first
	out.Boundary.Omitted = gaps(kept, in.Total)
	return out, nil
}

// conversationUnits makes one unit per candidate turn. The hot tail is
// mandatory. A tool-call group (the assistant message and its results) is
// all-or-nothing; a result whose call is not a candidate is left out (a
// provider rejects an orphan tool message) and said, hot or not. Under the
// Contiguous window each older exchange is atomic and requires the next
// one, so what is kept is a suffix of whole exchanges.
func conversationUnits(in ConversationInput, hotStart int64, counts map[string]tokenizer.Count) ([]Unit, []solver.Constraint, []LeftOut) {
	var units []Unit
	var cons []solver.Constraint
	var leftOut []LeftOut
	callOf := map[string]string{}    // tool_call_id → assistant unit id
	exchange, prevExchange := "", "" // first unit of the current and previous older exchange
	for _, t := range in.Turns {
		id := UnitID(t.Seq)
		hot := t.Seq >= hotStart
		if !hot && in.Policy.Window == Contiguous && exchange == "" && t.Message.Role != "user" {
			continue // the candidates start inside an exchange whose question is not one of them
		}
		if t.Message.ToolCallID != "" && callOf[t.Message.ToolCallID] == "" {
			leftOut = append(leftOut, LeftOut{Seq: t.Seq, Reason: ReasonOrphanToolResult})
			continue
		}
		u := in.Utilities.OlderBase + in.Utilities.OlderPerSeq*t.Seq
		if hot {
			u = in.Utilities.HotBase + in.Utilities.HotPerSeq*t.Seq
		}
		vs := []Variant{{Kind: "verbatim", Count: turnCost(in.Counter, t, counts), Utility: u, Value: t.Message}}
		if hot {
			if m, ok := excerpt(in.Counter, t, in.Utilities.ExcerptTokens, in.Utilities.ExcerptTemplate); ok {
				vs = append(vs, Variant{Kind: "excerpt", Count: messageCost(in.Counter, m, nil), Utility: u / 2, Value: m})
			}
		}
		units = append(units, Unit{ID: id, Section: "conversation", Mandatory: hot, Order: t.Seq, Variants: vs})
		if t.NoReply && in.Utilities.NoReplyTemplate != "" {
			m := tokenizer.Message{Role: tokenizer.RoleAssistant, Content: RenderNoReply(in.Utilities.NoReplyTemplate, t.Seq)}
			units = append(units, Unit{ID: NoReplyID(t.Seq), Section: NoReplySection, Mandatory: hot, Order: t.Seq,
				Variants: []Variant{{Kind: "note", Count: messageCost(in.Counter, m, nil), Utility: u, Value: m}}})
			cons = append(cons, solver.SameChoice(id, NoReplyID(t.Seq)))
		}
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
	return units, cons, leftOut
}

// turnCost is what a stored turn adds to the request, from its cached
// content count when it has one (recorded in counts for the recount).
func turnCost(c tokenizer.Counter, t Turn, counts map[string]tokenizer.Count) tokenizer.Count {
	if !t.Cached {
		return messageCost(c, t.Message, nil)
	}
	counts[UnitID(t.Seq)] = t.Content
	return messageCost(c, t.Message, &t.Content)
}

// pinnedUnits makes one mandatory unit per pinned message, valued like
// the hot tail, and the map of cached content counts the other turns add
// to.
func pinnedUnits(in ConversationInput) ([]Unit, map[string]tokenizer.Count) {
	counts := map[string]tokenizer.Count{}
	units := make([]Unit, len(in.Pinned))
	for i, t := range in.Pinned {
		units[i] = Unit{ID: UnitID(t.Seq), Section: PinnedSection, Mandatory: true, Order: t.Seq,
			Variants: []Variant{{Kind: "verbatim", Count: turnCost(in.Counter, t, counts),
				Utility: in.Utilities.HotBase + in.Utilities.HotPerSeq*t.Seq, Value: t.Message}}}
	}
	return units, counts
}

// checkPinned fails closed, naming every pinned unit, when the pinned
// messages do not fit beside the visible fixed sections, the reserve and
// the margin: the solver's conflict would name some mandatory set, and
// what a program must act on is its pins.
func checkPinned(p Policy, sections []Section, pinned []Unit) error {
	if len(pinned) == 0 {
		return nil
	}
	var fixed, need int64
	for _, s := range sections {
		if s.Visibility == Model {
			fixed += int64(s.Count.Tokens)
		}
	}
	ids := make([]string, len(pinned))
	for i, u := range pinned {
		need += int64(u.Variants[0].Count.Tokens)
		ids[i] = u.ID
	}
	base := fixed + p.ReserveOutputTokens + p.SafetyMarginTokens
	if avail := p.Effective() - base; need > avail && base <= p.Effective() {
		return &Error{Kind: KindPinnedExceeds, Units: ids, Base: base, Effective: p.Effective(), Available: avail, Excess: need - avail}
	}
	return nil
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

// stableConversation packs under window(stable): the contiguous window
// from in.StableStart when everything from there on still fits, else from
// a start moved forward in one step (Policy.StableSlidePercent). The
// boundary names the window's start, so its text changes only when the
// window moves.
func stableConversation(ctx context.Context, in ConversationInput, hotStart int64) (ConversationPack, error) {
	from := func(start int64) (ConversationPack, bool, error) {
		sub := in
		sub.Policy.Window, sub.HotStart, sub.stableFrom = Contiguous, hotStart, max(1, start)
		sub.Turns = slices.DeleteFunc(slices.Clone(in.Turns), func(t Turn) bool { return t.Seq < start && t.Seq < hotStart })
		cp, err := conversation(ctx, sub)
		if err != nil {
			return cp, false, err
		}
		for _, r := range cp.Boundary.Omitted {
			if r.To >= start {
				return cp, false, nil // something from the start on was left out: the window does not fit
			}
		}
		return cp, true, nil
	}
	if start := min(in.StableStart, hotStart); start > 0 {
		cp, ok, err := from(start)
		if err != nil || ok {
			cp.Boundary.Stable = "kept"
			return cp, err
		}
	}
	// Move: the longest contiguous suffix that fits, less the slide.
	sub := in
	sub.Policy.Window, sub.HotStart = Contiguous, hotStart
	cp, err := conversation(ctx, sub)
	if err != nil {
		return cp, err
	}
	older := map[int64]int64{} // the kept older turns' tokens, by sequence
	var room int64
	for _, st := range cp.Ledger.Stages {
		if st.Kind != "context_unit" || st.Section != "conversation" {
			continue
		}
		for _, u := range cp.Units {
			if u.ID == st.Name && u.Order < hotStart {
				older[u.Order] = st.Charged
				room += st.Charged
			}
		}
	}
	slide := in.Policy.StableSlidePercent
	if slide == 0 {
		slide = 50
	}
	want := room * (100 - slide) / 100
	start, left := hotStart, room
	for _, t := range in.Turns { // ascending: the first exchange start whose suffix fits in want
		n, kept := older[t.Seq]
		if !kept {
			continue
		}
		if t.Message.Role == "user" && left <= want {
			start = t.Seq
			break
		}
		left -= n
	}
	if moved, ok, err := from(start); err == nil && ok {
		moved.Boundary.Stable = "moved"
		return moved, nil
	}
	cp.Boundary.Stable = "moved"
	return cp, nil
}
