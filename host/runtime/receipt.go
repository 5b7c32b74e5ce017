package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// receiptCollection is the store collection of turn receipts, keyed by
// turn id; each run of a turn is a new version.
const receiptCollection = "receipt"

// Receipt statuses.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Receipt is what a turn leaves for audit and replay: what the model saw,
// how it was counted and what it cost — never a credential (requests carry
// none: keys travel in headers, which are not recorded).
type Receipt struct {
	TurnID       string `json:"turn_id"`
	Version      int    `json:"version,omitempty"` // the store version: one per run of the turn
	Status       string `json:"status"`
	Attempt      int    `json:"attempt"` // 1, or n after n-1 failed runs
	UserSeq      int64  `json:"user_seq"`
	AssistantSeq int64  `json:"assistant_seq,omitempty"`
	ValueType    string `json:"value_type,omitempty"` // text, or json for a structured value
	// Response is the rest of a model step's answer when the plan ended
	// with one: the value and the assistant message are its text.
	Response *ReceiptResponse `json:"response,omitempty"`
	Error    *ReceiptError    `json:"error,omitempty"`
	Counter  CounterID        `json:"counter"`
	// Context is the pack of the last request composed from the
	// conversation: what went in, in which representation, and the ledger.
	Context *ReceiptPack `json:"context,omitempty"`
	// CachePrefixTokens are the tokens of the leading messages the
	// planner's request shares with the previous turn's: what a provider's
	// prompt cache can reuse.
	CachePrefixTokens int           `json:"cache_prefix_tokens"`
	Calls             []ReceiptCall `json:"calls"`
	// MCP are the MCP servers whose tools the turn offered: the tools,
	// what their definitions cost, and each call.
	MCP        []ReceiptMCP     `json:"mcp,omitempty"`
	Plan       string           `json:"plan,omitempty"`
	Trajectory []ReceiptStep    `json:"trajectory,omitempty"`
	Usage      plan.UsageTotals `json:"usage"`
	Timings    ReceiptTimings   `json:"timings"`
	CreatedAt  int64            `json:"created_at_ms,omitempty"`
}

// ReceiptResponse is what a model answered besides its text.
type ReceiptResponse struct {
	Model     string `json:"model,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
}

// ReceiptError is why a run failed.
type ReceiptError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// CounterID names the counter of a turn: its encoding (empty for the
// estimator), the model asked for, and whether counts are exact,
// estimated or calibrated (the estimator scaled by Calibration, learnt
// from the provider's reported usage).
type CounterID struct {
	Encoding    string       `json:"encoding,omitempty"`
	Model       string       `json:"model,omitempty"`
	Method      string       `json:"method"`
	Calibration *Calibration `json:"calibration,omitempty"`
}

// MethodCalibrated is the method of a count made by the estimator
// calibrated against a provider's usage: estimated, never exact.
const MethodCalibrated = "calibrated"

func counterID(c tokenizer.Counter, model string, k *Calibration) CounterID {
	id := CounterID{Model: model, Method: tokenizer.Estimated.String()}
	switch e := c.Encoding(); {
	case e != nil:
		id.Encoding, id.Method = e.Name(), tokenizer.Exact.String()
	case k != nil:
		id.Method, id.Calibration = MethodCalibrated, k
	}
	return id
}

// countMethod is a call's count method: exact, estimated, calibrated
// (the estimator under k) or caller_supplied.
func countMethod(n tokenizer.Count, k *Calibration) string {
	if k != nil && n.Method == tokenizer.Estimated {
		return MethodCalibrated
	}
	return n.Method.String()
}

// ReceiptPack is a pack as a receipt keeps it.
type ReceiptPack struct {
	Selected []ReceiptUnit   `json:"selected"`
	Stages   []ReceiptStage  `json:"stages"`
	Total    int64           `json:"total_tokens"`
	Limit    int64           `json:"limit"`
	Method   string          `json:"method"`
	Solver   ReceiptSolver   `json:"solver"`
	Boundary ReceiptBoundary `json:"boundary"`
	Warm     WarmStatus      `json:"warm"`
}

// ReceiptUnit is one selected unit and its representation.
type ReceiptUnit struct {
	ID             string `json:"id"`
	Section        string `json:"section"`
	Representation string `json:"representation"`
	Tokens         int    `json:"tokens"`
	// Hot marks a message of the mandatory recent tail (or the note after
	// one that got no reply).
	Hot bool `json:"hot,omitempty"`
}

// ReceiptStage is one ledger stage.
type ReceiptStage struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Charged int64  `json:"charged"`
	Method  string `json:"method"`
}

// ReceiptSolver is how the selection was proven. Work is the solver's
// deterministic effort (the same on any machine); Limit names the limit
// that stopped a search that did not prove optimality.
type ReceiptSolver struct {
	Status  string `json:"status"`
	Bound   int64  `json:"bound"`
	Utility int64  `json:"utility"`
	Work    int64  `json:"work"`
	Limit   string `json:"limit,omitempty"`
}

// ReceiptBoundary is the cold-history boundary's status.
type ReceiptBoundary struct {
	Active      bool         `json:"active"`
	ColdThrough int64        `json:"cold_through,omitempty"`
	Omitted     []pack.Range `json:"omitted,omitempty"`
	// LeftOut are the messages the pack could not send, and why.
	LeftOut []pack.LeftOut `json:"left_out,omitempty"`
	// Window is, under window(stable), kept (the request extends the
	// previous turn's, a cacheable prefix) or moved (the window's start
	// moved forward: the prefix breaks after the fixed sections).
	Window string `json:"window,omitempty"`
}

// ReceiptStep is one trajectory event, summarized.
type ReceiptStep struct {
	Op     string `json:"op"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Depth  int    `json:"depth,omitempty"`
}

// ReceiptTimings are wall times in milliseconds.
type ReceiptTimings struct {
	PackMS       float64 `json:"pack_ms"`
	CompletionMS float64 `json:"completion_ms"`
	TotalMS      float64 `json:"total_ms"`
}

// ReceiptCall is one model or planner call of a turn: the SHA-256 of the
// exact body sent (for a provider over HTTP, the bytes on the wire; for an
// in-process handler, the body a provider would have sent), the local count
// of its prompt next to the provider's, and the recipe that renders it
// again from the store (Replay).
type ReceiptCall struct {
	Kind  string `json:"kind"` // planner, model or respond
	Depth int    `json:"depth,omitempty"`
	// Dialect is the wire format of the body: openai (also when absent, in
	// receipts older than dialects) or anthropic.
	Dialect           string `json:"dialect,omitempty"`
	RequestSHA256     string `json:"request_sha256"`
	LocalPromptTokens int    `json:"local_prompt_tokens"`
	// Method is how LocalPromptTokens was counted: exact, estimated,
	// calibrated (with Calibration, the ratio its pack used) or
	// caller_supplied.
	Method      string       `json:"method"`
	Calibration *Calibration `json:"calibration,omitempty"`
	// ProviderPromptTokens is usage.prompt_tokens as reported (nil when
	// not), and Difference provider − local.
	ProviderPromptTokens *int `json:"provider_prompt_tokens,omitempty"`
	Difference           *int `json:"difference,omitempty"`
	// CachedTokens are the prompt tokens the provider says it served
	// from its prompt cache (beside the turn's predicted
	// CachePrefixTokens), CacheWriteTokens those it wrote to it,
	// CompletionTokens and ReasoningTokens what it generated; each nil
	// when the provider did not report it.
	CachedTokens     *int `json:"cached_tokens,omitempty"`
	CacheWriteTokens *int `json:"cache_write_tokens,omitempty"`
	CompletionTokens *int `json:"completion_tokens,omitempty"`
	ReasoningTokens  *int `json:"reasoning_tokens,omitempty"`
	// CostUSD is what the call cost in US dollars: from the price table
	// (Options.Prices) for the model named in the body when it has one
	// and the provider reported the prompt and completion counts
	// (CostSource "price_table"), else the cost the provider reported
	// (OpenRouter; "provider"); nil when neither is known.
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	CostSource string   `json:"cost_source,omitempty"`
	// Attempt numbers the HTTP requests of one call (1, 2, ... for its
	// retries; 0 for a call no HTTP provider sent), each an entry of its
	// own: every request that reached the wire is in the receipt. Status
	// is the HTTP status (0 when none arrived) and Error why the attempt
	// failed.
	Attempt int    `json:"attempt,omitempty"`
	Status  int    `json:"status,omitempty"`
	Error   string `json:"error,omitempty"`
	Recipe  Recipe `json:"recipe"`

	model string // the model named in the body (for the call's span)
}

// Where a call's cost comes from.
const (
	CostPriceTable = "price_table"
	CostProvider   = "provider"
)

// Cost sums the cost of the receipt's calls that have one, and counts the
// calls that completed without one (an attempt that failed is not
// counted: it produced nothing to bill).
func (r Receipt) Cost() (usd float64, unpriced int) {
	for _, c := range r.Calls {
		switch {
		case c.CostUSD != nil:
			usd += *c.CostUSD
		case c.Error == "":
			unpriced++
		}
	}
	return usd, unpriced
}

// CachedTokens sums the cached prompt tokens the provider reported for
// the receipt's calls, and whether any call reported them.
func (r Receipt) CachedTokens() (int, bool) {
	n, any := 0, false
	for _, c := range r.Calls {
		if c.CachedTokens != nil {
			n, any = n+*c.CachedTokens, true
		}
	}
	return n, any
}

// CacheWriteTokens sums the prompt tokens the provider reported writing
// to its cache for the receipt's calls, and whether any call reported
// them.
func (r Receipt) CacheWriteTokens() (int, bool) {
	n, any := 0, false
	for _, c := range r.Calls {
		if c.CacheWriteTokens != nil {
			n, any = n+*c.CacheWriteTokens, true
		}
	}
	return n, any
}

// Recipe renders a call's request from the store: its parameters as sent
// (model, max_tokens, ...; no messages) and its messages, each a stored
// message (by sequence), a warm representation (by key, version, kind) or
// literal text (sections, the boundary, the planner's parts).
type Recipe struct {
	Params   json.RawMessage `json:"params"`
	Stream   bool            `json:"stream,omitempty"`
	Messages []RecipeMessage `json:"messages"`
	// Cache are the request's cache breakpoints and TTL (nil when none):
	// the bytes of a dialect that sends them depend on them.
	Cache *tokenizer.CacheHints `json:"cache,omitempty"`
}

// RecipeMessage is one message of a Recipe.
type RecipeMessage struct {
	Seq  int64    `json:"seq,omitempty"`
	Warm *WarmRef `json:"warm,omitempty"`
	Role string   `json:"role,omitempty"`
	Text string   `json:"text,omitempty"`
	// Message is a literal message that text cannot carry (tool calls,
	// parts): a plan step's request as the plan built it. Its signed
	// reasoning, which its JSON (the wire form) leaves out, is kept beside
	// it.
	Message            *tokenizer.Message `json:"message,omitempty"`
	Reasoning          string             `json:"reasoning,omitempty"`
	ReasoningSignature string             `json:"reasoning_signature,omitempty"`
	// Ref is the SHA-256 of a literal message kept once per conversation
	// (the planner's instructions, a system prompt: the same in every
	// turn) instead of in each receipt: see [externalize].
	Ref string `json:"ref,omitempty"`
	// Tokens are the message's tokens in the request (content and framing).
	Tokens int `json:"tokens,omitempty"`
}

// same reports whether two recipe messages render the same message.
func (m RecipeMessage) same(o RecipeMessage) bool {
	switch {
	case m.Warm != nil || o.Warm != nil:
		return m.Warm != nil && o.Warm != nil && *m.Warm == *o.Warm
	case m.Seq != 0 || o.Seq != 0:
		return m.Seq == o.Seq
	}
	// A literal is the same kept inline or by reference (a large one: by
	// its hash); small ones compare as they are.
	a, _, _ := literalRef(m)
	b, _, _ := literalRef(o)
	if a != "" || b != "" {
		return a == b
	}
	return m.Role == o.Role && m.Text == o.Text && m.Reasoning == o.Reasoning && m.ReasoningSignature == o.ReasoningSignature &&
		(m.Message == nil) == (o.Message == nil) && (m.Message == nil || reflect.DeepEqual(m.literal(), o.literal()))
}

// literal is a literal message with its signed reasoning.
func (m RecipeMessage) literal() tokenizer.Message {
	msg := *m.Message
	if m.ReasoningSignature != "" {
		msg.Reasoning, msg.ReasoningSignature = m.Reasoning, m.ReasoningSignature
	}
	return msg
}

// textCollection holds the literal messages recipes refer to by Ref,
// keyed by the SHA-256 of their JSON (a tokenizer.Message), one version
// each.
const textCollection = "receipt_text"

// minRefBytes is the size from which a literal message is kept once by
// reference rather than in the receipt: below it a reference saves little.
const minRefBytes = 256

// literalRef is the Ref a literal recipe message is kept under and its
// document's body, or "" when it stays inline (small, or not a literal).
func literalRef(m RecipeMessage) (string, []byte, error) {
	switch {
	case m.Ref != "":
		return m.Ref, nil, nil
	case m.Seq > 0 || m.Warm != nil || m.ReasoningSignature != "":
		return "", nil, nil // a signed reasoning stays with its message
	}
	lit := m.Message
	if lit == nil {
		if len(m.Text) < minRefBytes {
			return "", nil, nil
		}
		lit = &tokenizer.Message{Role: m.Role, Content: m.Text}
	}
	body, err := json.Marshal(lit)
	if err != nil || len(body) < minRefBytes {
		return "", nil, err
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), body, nil
}

// externalize moves the large literal messages of r's recipes out of it:
// each becomes a Ref, and its JSON a document of textCollection, returned
// once per hash (known says which the store holds already). Replay reads
// them back; the hashes of the bodies sent are unchanged.
func externalize(r *Receipt, known func(ref string) bool) ([]store.DocPut, error) {
	var puts []store.DocPut
	seen := map[string]bool{}
	for i := range r.Calls {
		msgs := r.Calls[i].Recipe.Messages
		for j, m := range msgs {
			if m.Ref != "" {
				continue
			}
			ref, body, err := literalRef(m)
			if err != nil {
				return nil, err
			}
			if ref == "" {
				continue
			}
			if !seen[ref] && !known(ref) {
				puts = append(puts, store.DocPut{Collection: textCollection, Key: ref, Body: body})
			}
			seen[ref] = true
			msgs[j] = RecipeMessage{Ref: ref, Tokens: m.Tokens}
		}
	}
	return puts, nil
}

// WarmRef names one representation of one artifact version.
type WarmRef struct {
	Key     string `json:"key"`
	Version int    `json:"version"`
	Kind    string `json:"kind"`
}

// receiptPack keeps what a receipt needs of a pack.
func receiptPack(cp Packed) *ReceiptPack {
	rp := &ReceiptPack{Total: cp.Ledger.Total, Limit: cp.Ledger.Limit, Method: cp.Ledger.Method.String(),
		Solver: ReceiptSolver{Status: cp.Status.String(), Bound: cp.Bound, Utility: cp.Utility, Work: cp.Stats.Work},
		Boundary: ReceiptBoundary{Active: cp.Boundary.Active, ColdThrough: cp.Boundary.ColdThrough, Omitted: cp.Boundary.Omitted, LeftOut: cp.Boundary.LeftOut,
			Window: cp.Boundary.Stable},
		Warm: cp.Warm}
	if cp.Stats.Limit != solver.LimitNone {
		rp.Solver.Limit = cp.Stats.Limit.String()
	}
	for _, s := range cp.Selected {
		u := cp.Units[s.Unit]
		v := u.Variants[s.Variant]
		rp.Selected = append(rp.Selected, ReceiptUnit{ID: u.ID, Section: u.Section, Representation: v.Kind, Tokens: v.Count.Tokens,
			Hot: u.Mandatory && (u.Section == "conversation" || u.Section == pack.NoReplySection)})
	}
	for _, s := range cp.Ledger.Stages {
		rp.Stages = append(rp.Stages, ReceiptStage{Name: s.Name, Kind: s.Kind, Charged: s.Charged, Method: s.Count.Method.String()})
	}
	return rp
}

// recipeOf is the recipe of a composed request: the model sections, the
// selected units in render order and the trailer, as the pack rendered
// them.
func recipeOf(cp Packed, sections, trailer []pack.TextSection) []RecipeMessage {
	var out []RecipeMessage
	lit := func(ss []pack.TextSection) {
		for _, s := range ss {
			if s.Visibility != pack.Model {
				continue
			}
			m := s.Message()
			if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
				out = append(out, RecipeMessage{Message: &m, Reasoning: s.Reasoning, ReasoningSignature: s.ReasoningSignature}) // a direct turn's tool round
			} else {
				out = append(out, RecipeMessage{Role: m.Role, Text: m.Content})
			}
		}
	}
	lit(sections)
	for _, s := range cp.Selected {
		u := cp.Units[s.Unit]
		v := u.Variants[s.Variant]
		switch {
		case u.Section == "conversation" || u.Section == pack.PinnedSection:
			if v.Kind == "verbatim" {
				out = append(out, RecipeMessage{Seq: u.Order})
			} else { // an excerpt: rendered by the pack, not stored
				m := v.Value.(tokenizer.Message)
				out = append(out, RecipeMessage{Message: &m})
			}
		case u.Section == "warm" && !cp.WarmElsewhere:
			out = append(out, RecipeMessage{Warm: &WarmRef{Key: u.ID, Version: cp.WarmVersions[u.ID], Kind: v.Kind}})
		default:
			m := v.Value.(tokenizer.Message)
			out = append(out, RecipeMessage{Role: m.Role, Text: m.Content})
		}
	}
	lit(trailer)
	for i, c := range cp.Counted.Messages(len(out)) {
		out[i].Tokens = c.Tokens
	}
	return out
}

// literalRecipe is the recipe of a request built outside a pack.
func literalRecipe(msgs []tokenizer.Message) []RecipeMessage {
	out := make([]RecipeMessage, len(msgs))
	for i := range msgs {
		out[i] = RecipeMessage{Message: &msgs[i]}
		if m := msgs[i]; m.ReasoningSignature != "" {
			out[i].Reasoning, out[i].ReasoningSignature = m.Reasoning, m.ReasoningSignature
		}
	}
	return out
}

// callRecord is a call's receipt entry for attempt a: its body is what
// was sent, in its dialect, encoding its request (a body without a
// dialect is chat completions', of req with the fields read back from
// it; without a body, no HTTP provider sent it: the body a provider would
// send).
func callRecord(kind string, depth int, req tokenizer.Request, a provider.Attempt, cc composedCall, usage plan.Usage, prices provider.Prices) (ReceiptCall, error) {
	params, stream, body := req, a.Stream, a.Body // the parameters as sent (model and all), without messages
	if a.Request != nil {
		params = *a.Request
	}
	params.Messages = nil
	switch {
	case a.Request != nil: // an HTTP attempt says what its body encodes
	case body == nil:
		b, err := provider.Body(&req, false)
		if err != nil {
			return ReceiptCall{}, err
		}
		body = b
	default:
		// Read the fields a provider set (its default model, its options)
		// from the body, without decoding the messages.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil {
			return ReceiptCall{}, err
		}
		stream = string(fields["stream"]) == "true"
		delete(fields, "messages")
		rest, _ := json.Marshal(fields)
		if err := json.Unmarshal(rest, &params); err != nil {
			return ReceiptCall{}, err
		}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return ReceiptCall{}, err
	}
	sum := sha256.Sum256(body)
	local := cc.count
	rc := ReceiptCall{Kind: kind, Depth: depth, RequestSHA256: hex.EncodeToString(sum[:]), LocalPromptTokens: local.Tokens,
		Method: countMethod(local, cc.calib), Recipe: Recipe{Params: p, Stream: stream, Messages: cc.recipe}}
	if a.Dialect != provider.APIOpenAI {
		rc.Dialect = a.Dialect // "" for in-process handlers: the openai body
	}
	if rc.Method == MethodCalibrated {
		rc.Calibration = cc.calib
	}
	if len(params.Cache.Breakpoints) > 0 {
		rc.Recipe.Cache = &tokenizer.CacheHints{Breakpoints: params.Cache.Breakpoints, TTL: params.Cache.TTL}
	}
	if usage.PromptKnown {
		pt, d := usage.PromptTokens, usage.PromptTokens-local.Tokens
		rc.ProviderPromptTokens, rc.Difference = &pt, &d
	}
	known := func(ok bool, v int) *int {
		if !ok {
			return nil
		}
		return &v
	}
	rc.CachedTokens = known(usage.CachedKnown, usage.CachedTokens)
	rc.CacheWriteTokens = known(usage.CacheWriteKnown, usage.CacheWriteTokens)
	rc.CompletionTokens = known(usage.CompletionKnown, usage.CompletionTokens)
	rc.ReasoningTokens = known(usage.ReasoningKnown, usage.ReasoningTokens)
	rc.model = params.Model
	if price, ok := prices.Lookup(params.Model); ok {
		if c, ok := price.Cost(provider.Usage(usage)); ok {
			rc.CostUSD, rc.CostSource = &c, CostPriceTable
		}
	}
	if rc.CostUSD == nil && usage.CostKnown {
		c := usage.Cost
		rc.CostUSD, rc.CostSource = &c, CostProvider
	}
	return rc, nil
}

// Receipt reads the latest receipt of a turn ([store.ErrNotFound] when
// the turn never ran).
func (c Conversation) Receipt(turnID string) (Receipt, error) {
	d, err := c.st.db.GetDoc(c.id, receiptCollection, turnID, 0)
	if err != nil {
		return Receipt{}, err
	}
	return decodeReceipt(d)
}

func decodeReceipt(d store.Doc) (Receipt, error) {
	var r Receipt
	if err := json.Unmarshal(d.Body, &r); err != nil {
		return r, fmt.Errorf("%w: receipt %s v%d: %v", store.ErrCorrupt, d.Key, d.Version, err)
	}
	r.Version, r.CreatedAt = d.Version, d.CreatedAt.UnixMilli()
	return r, nil
}

// Receipts lists the conversation's receipts, the latest of each turn (or
// every run with history), in the order of their user messages.
func (c Conversation) Receipts(history bool) ([]Receipt, error) {
	var out []Receipt
	err := c.EachReceipt(ReceiptQuery{History: history}, func(r Receipt) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// ReceiptQuery selects receipts for [Conversation.EachReceipt].
type ReceiptQuery struct {
	// After skips the turns whose user message is at or before this
	// sequence: the UserSeq of a page's last receipt starts the next page.
	After int64
	// Limit bounds the receipts given (0: no bound).
	Limit int
	// History gives every run of each turn, not only the latest.
	History bool
	// Status keeps the receipts of that status ("" or "any": every one).
	Status string
}

// EachReceipt calls fn with the receipts q selects, in the order of their
// user messages (a turn's runs in order), reading one at a time: the cost
// is O(messages after q.After up to the last receipt given), not
// O(receipts stored). Turns are found by their user messages' keys
// (turn/<id>/user), which every turn has always written: no index of its
// own to keep or to miss for older receipts. A turn whose user message has
// no stored receipt is given one of its state, Version 0: StatusRunning
// while it runs, else the failed receipt (KindInterrupted) of a turn
// whose process ended, which the next turn stores. An error from fn stops
// the walk and is returned.
func (c Conversation) EachReceipt(q ReceiptQuery, fn func(Receipt) error) error {
	given := 0
	give := func(r Receipt) error {
		given++
		if err := fn(r); err != nil {
			return err
		}
		if q.Limit > 0 && given == q.Limit {
			return errEnough
		}
		return nil
	}
	// The turn ids come from the messages in batches, and their receipts
	// are read between scans: a read inside a scan would nest the store's
	// locks.
	for next := max(1, q.After+1); ; {
		var users []store.Record
		err := c.st.db.Scan(c.id, next, 0, false, func(m store.Record) bool {
			next = m.Seq + 1
			if _, role, isTurn := turnOf(m.IdempotencyKey); isTurn && role == "user" && m.Message.Role == store.RoleUser {
				users = append(users, m)
			}
			return len(users) < receiptBatch
		})
		if err != nil {
			return err
		}
		for _, u := range users {
			if err := c.turnReceipts(u, q, give); errors.Is(err, errEnough) {
				return nil
			} else if err != nil {
				return err
			}
		}
		if len(users) < receiptBatch {
			return nil // the scan reached the end
		}
	}
}

// receiptBatch is how many turns EachReceipt finds per scan.
const receiptBatch = 64

// errEnough stops a walk that has given what was asked.
var errEnough = errors.New("runtime: enough")

// turnReceipts calls fn with the receipts q selects of the turn of user
// message user.
func (c Conversation) turnReceipts(user store.Record, q ReceiptQuery, fn func(Receipt) error) error {
	id, _, _ := turnOf(user.IdempotencyKey)
	last, err := c.Receipt(id)
	if errors.Is(err, store.ErrNotFound) {
		// The run that stored the message has stored no receipt: running,
		// or its process ended.
		last, err = c.pendingReceipt(context.Background(), id, user)
	}
	if err != nil {
		return err
	}
	from := last.Version
	if q.History {
		from = 1
	}
	for v := from; v <= last.Version; v++ {
		r := last
		if v < last.Version {
			d, err := c.st.db.GetDoc(c.id, receiptCollection, id, v)
			if err != nil {
				return err
			}
			if r, err = decodeReceipt(d); err != nil {
				return err
			}
		}
		if q.Status == "" || q.Status == "any" || q.Status == r.Status {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// storedTurn is the result of a turn that completed before.
func (c Conversation) storedTurn(r Receipt) (TurnResult, error) {
	user, err := c.Message(r.UserSeq)
	if err != nil {
		return TurnResult{}, err
	}
	asst, err := c.Message(r.AssistantSeq)
	if err != nil {
		return TurnResult{}, err
	}
	return TurnResult{TurnID: r.TurnID, User: user, Assistant: asst, Receipt: r, Replayed: true}, nil
}

// ErrReplayMismatch is returned when a call rendered again from the store
// does not hash to what was sent.
var ErrReplayMismatch = errors.New("runtime: replayed request differs from the one sent")

// Replay renders every call of a turn's receipt again from the store —
// stored messages by sequence, warm representations by key and version,
// the recorded literal parts, with the parameters and cache breakpoints
// sent, in the call's dialect — and checks each body's SHA-256 against
// the receipt's, byte for byte (I10). It returns the bodies.
func (c Conversation) Replay(ctx context.Context, turnID string) ([][]byte, error) {
	r, err := c.Receipt(turnID)
	if err != nil {
		return nil, err
	}
	warm := map[string]WarmArtifact{}
	var bodies [][]byte
	for i, call := range r.Calls {
		d, ok := provider.DialectNamed(call.Dialect)
		if !ok {
			return nil, fmt.Errorf("%w: call %d: unknown dialect %q", ErrReplayMismatch, i+1, call.Dialect)
		}
		var req tokenizer.Request
		if err := json.Unmarshal(call.Recipe.Params, &req); err != nil {
			return nil, err
		}
		req.Messages = nil
		if c := call.Recipe.Cache; c != nil {
			req.Cache = *c
		}
		for _, m := range call.Recipe.Messages {
			msg, err := c.recipeMessage(m, warm)
			if err != nil {
				return nil, fmt.Errorf("call %d: %w", i+1, err)
			}
			req.Messages = append(req.Messages, msg)
		}
		body, err := d.Body(&req, call.Recipe.Stream)
		if err != nil {
			return nil, err
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != call.RequestSHA256 {
			return nil, fmt.Errorf("%w: call %d (%s)", ErrReplayMismatch, i+1, call.Kind)
		}
		bodies = append(bodies, body)
	}
	return bodies, nil
}

// recipeMessage renders one recipe message from the store.
func (c Conversation) recipeMessage(m RecipeMessage, warm map[string]WarmArtifact) (tokenizer.Message, error) {
	switch {
	case m.Message != nil:
		return m.literal(), nil
	case m.Ref != "":
		d, err := c.st.db.GetDoc(c.id, textCollection, m.Ref, 1)
		if err != nil {
			return tokenizer.Message{}, err
		}
		var msg tokenizer.Message
		if err := json.Unmarshal(d.Body, &msg); err != nil {
			return msg, fmt.Errorf("%w: recipe text %s: %v", store.ErrCorrupt, m.Ref, err)
		}
		return msg, nil
	case m.Seq > 0:
		r, err := c.Message(m.Seq)
		if err != nil {
			return tokenizer.Message{}, err
		}
		return ChatMessage(r.Message), nil
	case m.Warm != nil:
		id := fmt.Sprintf("%s@%d", m.Warm.Key, m.Warm.Version)
		a, ok := warm[id]
		if !ok {
			d, err := c.st.db.GetDoc(c.id, warmCollection, m.Warm.Key, m.Warm.Version)
			if err != nil {
				return tokenizer.Message{}, err
			}
			if a, err = decodeArtifact(d); err != nil {
				return tokenizer.Message{}, err
			}
			warm[id] = a
		}
		for _, v := range a.Variants {
			if v.Kind == m.Warm.Kind {
				return tokenizer.Message{Role: tokenizer.RoleSystem, Content: v.Text}, nil
			}
		}
		return tokenizer.Message{}, fmt.Errorf("warm %s has no %s", id, m.Warm.Kind)
	}
	return tokenizer.Message{Role: m.Role, Content: m.Text}, nil
}
