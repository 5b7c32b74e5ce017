package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// PackOptions are one conversation pack. [Conversation.Pack] validates
// them whole before it reads or writes anything.
type PackOptions struct {
	Policy pack.Policy
	// Model or Encoding names the tokenizer (at most one). A known model
	// counts exactly with its encoding; an unknown model, or neither, counts
	// with the conservative estimator and the ledger says estimated.
	Model, Encoding string
	// CountText, when set, is the caller's own counter (upstream's
	// token_counter(C); see tokenizer.CallerCounter): every text count is
	// its, labelled caller_supplied. Not with Model or Encoding.
	CountText func(text string) int
	// Sections are fixed text: model sections are rendered and charged,
	// host sections measured only. Trailer sections render after the
	// conversation.
	Sections []pack.TextSection
	Trailer  []pack.TextSection
	// Tools and Format are sent with the request and charged as fixed
	// stages: the function definitions a provider receives, a response
	// format (a turn's plan schema).
	Tools  []tokenizer.Tool
	Format *tokenizer.ResponseFormat
	// FormatFree: the server applies Format as a sampling grammar and
	// shows the model none of it, so it is charged no tokens.
	FormatFree bool
	// Units are explicit units (variant values tokenizer.Message) with
	// their constraints.
	Units       []pack.Unit
	Constraints []solver.Constraint
	// Warm, when set, offers the conversation's published warm artifacts
	// (I2): no caller-side unit plumbing.
	Warm *WarmOptions
	// Boundary adds the cold-history boundary, rendered from the first of
	// BoundaryTemplates (see pack.RenderBoundary) with which the pack fits,
	// whenever history may be cold.
	Boundary          bool
	BoundaryTemplates []string
	Utilities         pack.Utilities
	// Hook, when set, sees the candidate batch once and returns utility
	// changes, mandatory units and constraints (a program's pack hook).
	Hook func(ctx context.Context, units []HookUnit) ([]pack.Adjustment, []solver.Constraint, error)
	// Solver tunes the optimizer; nil means its defaults.
	Solver *solver.Options
	// StableStart is, under window(stable), the first sequence of the
	// previous request's window (0: none; a managed turn sets it from the
	// previous turn's receipt).
	StableStart int64
	// Calibration, when set, scales the estimator's counts by a ratio
	// learnt from a provider's reported usage (see calibration.go; a
	// managed turn sets it from its provider's). An exact counter or a
	// caller's is not calibrated.
	Calibration *Calibration
}

// HookUnit is one candidate message as a pack hook sees it.
type HookUnit struct {
	ID        string
	Seq       int64
	Mandatory bool
}

// maxToolExtension bounds how far back the hot tail moves to reach the
// call of tool results it starts with (parallel calls answered in a row).
const maxToolExtension = 128

// validate checks opts and returns the counter.
func (r *Runtime) packCounter(opts *PackOptions) (tokenizer.Counter, error) {
	if err := opts.Policy.Validate(); err != nil {
		return tokenizer.Counter{}, err
	}
	seen := map[string]bool{pack.BoundaryID: true}
	for _, u := range opts.Units {
		if u.ID == "" || seen[u.ID] {
			return tokenizer.Counter{}, &pack.FieldError{Field: "units", Value: u.ID, Msg: "unit ids must be unique and non-empty"}
		}
		seen[u.ID] = true
		if len(u.Variants) == 0 {
			return tokenizer.Counter{}, &pack.Error{Kind: pack.KindEmptyVariants, Units: []string{u.ID}}
		}
		for _, v := range u.Variants {
			if _, isMessage := v.Value.(tokenizer.Message); !isMessage {
				return tokenizer.Counter{}, &pack.FieldError{Field: "units", Value: u.ID, Msg: "a variant's value is the message it renders"}
			}
		}
	}
	for _, s := range append(slices.Clone(opts.Sections), opts.Trailer...) {
		if s.Visibility != pack.Model && s.Visibility != pack.Host {
			return tokenizer.Counter{}, &pack.FieldError{Field: "sections", Value: s.Visibility, Msg: "visibility must be model or host"}
		}
	}
	if w := opts.Warm; w != nil {
		if err := w.Policy.validate(); err != nil {
			return tokenizer.Counter{}, err
		}
	}
	reg := r.Tokenizers()
	var (
		c   tokenizer.Counter
		err error
	)
	switch {
	case opts.CountText != nil && (opts.Model != "" || opts.Encoding != ""):
		return tokenizer.Counter{}, &pack.FieldError{Field: "token_options", Value: "token_counter", Msg: "give a counter, a model or an encoding, not two"}
	case opts.CountText != nil:
		c = tokenizer.CallerCounter(opts.CountText)
	case opts.Model != "" && opts.Encoding != "":
		return tokenizer.Counter{}, &pack.FieldError{Field: "token_options", Value: opts.Model, Msg: "give a model or an encoding, not both"}
	case opts.Encoding != "":
		c, err = reg.CounterForEncoding(opts.Encoding)
	case opts.Model != "":
		c, err = reg.Counter(opts.Model)
		if errors.Is(err, tokenizer.ErrUnknownModel) {
			c, err = reg.Estimator(), nil // counted, and labelled, as estimated
		}
	default:
		c = reg.Estimator()
	}
	if opts.FormatFree {
		c = c.WithSchemaFree()
	}
	if k := opts.Calibration; k != nil {
		c = c.Calibrated(k.Ratio, k.SafetyPercent)
	}
	return c, err
}

// Pack compiles the provider-visible context of the conversation under the
// policy's hard ceiling: it reads the hot tail and at most MaxCandidates
// older messages (O(candidates), whatever the history length), solves one
// exact optimization and renders the request, whose independent recount
// must equal the ledger. Content counts missing for the counter's encoding
// are computed once and recorded, so the next pack does not re-tokenize.
func (c Conversation) Pack(ctx context.Context, opts PackOptions) (Packed, error) {
	counter, err := c.st.rt.packCounter(&opts)
	if err != nil {
		return Packed{}, err
	}
	st, err := c.Stats()
	if err != nil {
		return Packed{}, err
	}
	recs, hotStart, err := c.candidates(st.Messages, opts.Policy)
	if err != nil {
		return Packed{}, err
	}
	in := pack.ConversationInput{ConversationID: c.id, Total: st.Messages, HotStart: hotStart, Policy: opts.Policy,
		Sections: c.st.rt.sectionCounts.fill(opts.Sections, counter), Trailer: c.st.rt.sectionCounts.fill(opts.Trailer, counter), Tools: opts.Tools, Format: opts.Format, Extra: opts.Units, Constraints: opts.Constraints, Boundary: opts.Boundary,
		BoundaryTemplates: opts.BoundaryTemplates, Counter: counter, Utilities: opts.Utilities, Solver: opts.Solver, StableStart: opts.StableStart}
	enc := ""
	if e := counter.Encoding(); e != nil {
		enc = e.Name()
	}
	type fresh struct {
		seq int64
		n   int
	}
	var counted []fresh
	turn := func(r store.Record) pack.Turn {
		t := pack.Turn{Seq: r.Seq, Message: ChatMessage(r.Message)}
		if enc != "" && !r.Message.Content.IsParts() {
			n, cached := r.TokenCounts[enc]
			if !cached {
				n = counter.Count(t.Message.Content).Tokens
				counted = append(counted, fresh{r.Seq, n})
			}
			t.Content, t.Cached = tokenizer.Count{Tokens: n, Method: tokenizer.Exact, Basis: tokenizer.BasisBPE, Encoding: enc}, true
		}
		return t
	}
	pinned, err := c.pinned(opts.Utilities.PinnedRoles)
	if err != nil {
		return Packed{}, err
	}
	isPinned := make(map[int64]bool, len(pinned))
	for _, r := range pinned {
		in.Pinned, isPinned[r.Seq] = append(in.Pinned, turn(r)), true
	}
	for i, r := range recs {
		if !isPinned[r.Seq] {
			t := turn(r)
			t.NoReply = i+1 < len(recs) && unanswered(r, recs[i+1])
			in.Turns = append(in.Turns, t)
		}
	}
	var out Packed
	if opts.Warm != nil {
		units, arts, cons, st, err := c.warmUnits(*opts.Warm, in.Turns, hotStart, counter, opts.Utilities)
		if err != nil {
			return Packed{}, err
		}
		in.Extra, in.Constraints, out.Warm = append(units, in.Extra...), append(in.Constraints, cons...), st
		out.WarmElsewhere = opts.Warm.Store != nil && opts.Warm.Store != c.st
		out.WarmVersions = make(map[string]int, len(arts))
		for _, a := range arts {
			out.WarmVersions[a.Key] = a.Version
		}
	}
	if opts.Hook != nil {
		units := make([]HookUnit, len(in.Turns))
		for i, t := range in.Turns {
			units[i] = HookUnit{ID: pack.UnitID(t.Seq), Seq: t.Seq, Mandatory: t.Seq >= hotStart}
		}
		adj, cons, err := opts.Hook(ctx, units)
		if err != nil {
			return Packed{}, err
		}
		in.Adjust, in.Constraints = adj, append(in.Constraints, cons...)
	}
	cp, err := pack.Conversation(ctx, in)
	if err != nil {
		return Packed{}, err
	}
	for _, f := range counted {
		if err := c.st.db.SetTokenCount(c.id, f.seq, enc, f.n); err != nil {
			return Packed{}, fmt.Errorf("runtime: recording the %s count of message %d: %w", enc, f.seq, err)
		}
	}
	out.ConversationPack = cp
	return out, nil
}

// Packed is a conversation pack and what warm context contributed.
type Packed struct {
	pack.ConversationPack
	Warm         WarmStatus
	WarmVersions map[string]int // the version of each warm unit offered, by key
	// WarmElsewhere: the warm units came from a separate artifact store,
	// which a receipt's recipe cannot name, so it copies their text.
	WarmElsewhere bool
}

// candidates reads the hot tail and at most p.MaxCandidates older messages
// in one key range. The tail's start moves back over tool results to their
// call (reading further back only when the candidates end there), so the
// tail never begins inside a tool-call group.
func (c Conversation) candidates(total int64, p pack.Policy) ([]store.Record, int64, error) {
	if total == 0 {
		return nil, 1, nil
	}
	hotStart := max(1, total-int64(p.MinRecentTurns)+1)
	from := max(1, hotStart-int64(p.MaxCandidates))
	recs, err := c.Messages(store.Range(from, total), 0)
	for steps := 0; err == nil && hotStart > 1 && hotStart <= total && steps < maxToolExtension; steps++ {
		if recs[hotStart-from].Message.Role != store.RoleTool {
			break
		}
		if hotStart--; hotStart < from {
			var prev store.Record
			if prev, err = c.Message(hotStart); err == nil {
				recs, from = append([]store.Record{prev}, recs...), hotStart
			}
		}
	}
	return recs, hotStart, err
}

// unanswered reports whether r is a turn's user message that got no
// reply: the next message is another user message (its turn failed, or its
// process died, before an answer was stored). A user message appended
// outside a turn (an imported transcript) is the caller's and is left as
// it is.
func unanswered(r, next store.Record) bool {
	_, role, isTurn := turnOf(r.IdempotencyKey)
	return isTurn && role == "user" && r.Message.Role == store.RoleUser && next.Message.Role == store.RoleUser
}

// ChatMessage is a stored message as the provider sees it: text, or
// content parts, whose images the tokenizer charges by the model's image
// rule (never as the text of their URL). A tool's result is its text:
// providers take no image in one (an MCP result's images are stored with
// it; its text names them).
func ChatMessage(m store.Message) tokenizer.Message {
	tm := tokenizer.Message{Role: m.Role.String(), Name: m.Name, ToolCallID: m.ToolCallID, Content: m.Content.Text}
	if m.Role == store.RoleTool && m.Content.IsParts() {
		tm.Content = m.Content.PlainText()
		m.Content.Parts = nil
	}
	for _, p := range m.Content.Parts {
		if p.Type == store.PartText {
			tm.Parts = append(tm.Parts, tokenizer.TextPart(p.Text))
		} else {
			tm.Parts = append(tm.Parts, tokenizer.ImagePart(p.URL, p.Detail))
		}
	}
	for _, tc := range m.ToolCalls {
		tm.ToolCalls = append(tm.ToolCalls, tokenizer.ToolCall{ID: tc.ID, Type: "function",
			Function: tokenizer.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return tm
}

// countCache remembers the counts of section texts per encoding: the same
// sections (a system prompt, the planner's instructions and grammar) recur
// in every request of every turn. Bounded: it starts over when full.
type countCache struct {
	mu sync.Mutex // protects m
	m  map[string]int
}

const countCacheSize = 1024

// fill returns ss with each section's content count set, from the cache
// or counted now (exact counters only: the estimator is cheap).
func (cc *countCache) fill(ss []pack.TextSection, counter tokenizer.Counter) []pack.TextSection {
	enc := counter.Encoding()
	if enc == nil || len(ss) == 0 {
		return ss
	}
	out := slices.Clone(ss)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil || len(cc.m) >= countCacheSize {
		cc.m = make(map[string]int, countCacheSize)
	}
	for i := range out {
		key := enc.Name() + "\x00" + out[i].Text
		n, ok := cc.m[key]
		if !ok {
			n = counter.Count(out[i].Text).Tokens
			cc.m[key] = n
		}
		out[i].Content = tokenizer.Count{Tokens: n, Method: tokenizer.Exact, Basis: tokenizer.BasisBPE, Encoding: enc.Name()}
	}
	return out
}
