package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// A managed turn: the user message is stored durably, every request of the
// turn is compiled from the transcript under the hard ceiling (the
// planner's, with its instructions as ledger stages, and every model step
// the plan makes), a completion runs over an ephemeral cold-history handle
// with minimal authority, and the assistant message is stored with a
// receipt of what the model saw, in one transaction. A turn never
// rewrites, deletes, summarizes or compacts anything.

// TurnOptions are one turn's options; Handles is required.
type TurnOptions struct {
	// TurnID makes the turn idempotent: called again with the same id after
	// a success it returns the stored result without calling any model;
	// after a failure it reuses the stored user message and runs again.
	// The same id with another message is refused with an error wrapping
	// [store.ErrIdempotencyMismatch], and nothing is stored. Empty means a
	// fresh id (returned in the result).
	TurnID string
	// Mode is how the turn answers: ModePlanner ("" too) asks a planner
	// for a plan; ModeDirect runs plan.DirectPlan over the first of
	// Completion.Providers: the packed conversation goes to the model with
	// native history tools, and no planner is called.
	Mode string
	// Pack is the managed context: policy, counter, sections (a system
	// prompt, project instructions, skills), warm context, the boundary.
	// Its hot tail always holds the new user message.
	Pack PackOptions
	// Encodings are counted at append for the user and assistant messages.
	Encodings []string
	// Completion is the rlm_completion of the turn: capabilities (nil means
	// context(peek), context(slice), context(search) and model(P) for each
	// of its Providers; explicit ones are never widened), budget, tools,
	// planner options. The turn sets Query, Goal, Context and Compose.
	Completion plan.Input
	// Deps are the planner, models, tools and term reader; the turn adds
	// the context registry and wraps the planner and models to compose,
	// check and record every request.
	Deps plan.Deps
	// Handles is the registry of the turn's ephemeral cold-history handle;
	// Cold its limits.
	Handles *handle.Registry
	Cold    handle.Limits
	// MCP, when set, offers the tools of MCP servers its grants allow
	// (see MCPTools).
	MCP *MCPTools
	// OnEvent, when set, sees the turn as it happens (see TurnEvent). It
	// must not block; plan steps of parallel branches call it concurrently.
	OnEvent func(TurnEvent)
}

// TurnEvent is a moment of a turn: started (after the user message is
// stored), context (a request composed: Ledger), step (a plan step started
// or finished: Step), delta (text as it streams: a model step's, or a
// direct answer's as the planner writes it, see plan.AnswerScanner),
// finished or failed (Err). Deltas show progress; the answer is the
// result's assistant message (a planner answer rejected and asked again
// streams again).
type TurnEvent struct {
	Kind   string
	TurnID string
	Ledger *pack.Ledger
	Step   *plan.Event
	Text   string
	Err    error
}

// TurnResult is a completed turn.
type TurnResult struct {
	TurnID    string
	User      store.Record
	Assistant store.Record
	Receipt   Receipt
	// Value is the completion's value: the answer's text when the plan
	// ended with a model step (its model and reasoning are the receipt's
	// Response). Nil when Replayed: the assistant record holds it.
	Value any
	// Replayed is true when the turn had completed before under this id and
	// nothing was run.
	Replayed bool
}

// TurnError is a failed turn: the user message stays stored, marked by a
// failed receipt naming the cause.
type TurnError struct {
	Kind    string // turn_requires_user_message, context_budget_failed, completion_failed, receipt_failed
	TurnID  string
	User    *store.Record // the stored user message, when it was stored
	Ledger  *pack.Ledger  // the last request's ledger, when one was compiled
	Receipt *Receipt      // the failed receipt, when it was stored
	Cause   error
}

func (e *TurnError) Error() string {
	return fmt.Sprintf("runtime: turn %s: %s: %v", e.TurnID, e.Kind, e.Cause)
}

func (e *TurnError) Unwrap() error { return e.Cause }

// ErrNotUserMessage is the cause of a turn given a message of another role.
var ErrNotUserMessage = errors.New("runtime: a turn takes a user message")

// NewTurnID is a fresh turn id, for a caller that names a turn before
// running it.
func NewTurnID() string {
	var b [12]byte
	rand.Read(b[:])
	return "turn_" + hex.EncodeToString(b[:])
}

// turnKey is the idempotency key of one of a turn's messages.
func turnKey(id, role string) string { return "turn/" + id + "/" + role }

// Turn runs one managed turn (see TurnOptions). Nothing is written before
// the message and the options are checked; from the user message on,
// every outcome is recorded in a receipt.
func (c Conversation) Turn(ctx context.Context, msg store.Message, opts TurnOptions) (TurnResult, error) {
	if opts.TurnID == "" {
		opts.TurnID = NewTurnID()
	}
	ctx, span := c.startTurnSpan(ctx, opts)
	log := c.turnLogger(opts.TurnID)
	res, err := c.turn(ctx, msg, opts)
	endTurnSpan(span, res, err)
	logTurn(ctx, log, res, err)
	return res, err
}

// CheckTurn returns the error [Conversation.Turn] would return for msg
// and opts before writing anything (a message that is not a user's, a
// bad option), and nil when the turn may run. It does no I/O: a caller
// that runs the turn later (an async turn) checks first.
func (c Conversation) CheckTurn(msg store.Message, opts TurnOptions) error {
	_, _, _, err := c.prepareTurn(msg, opts)
	return err
}

// prepareTurn checks a turn's message and options and completes them,
// writing nothing.
func (c Conversation) prepareTurn(msg store.Message, opts TurnOptions) (_ store.Message, _ TurnOptions, counter tokenizer.Counter, err error) {
	if opts.TurnID == "" {
		opts.TurnID = NewTurnID()
	}
	if msg, err = msg.Normalize(); err != nil {
		return msg, opts, counter, err
	}
	switch {
	case msg.Role != store.RoleUser:
		err = &TurnError{Kind: "turn_requires_user_message", TurnID: opts.TurnID, Cause: fmt.Errorf("%w (got %s)", ErrNotUserMessage, msg.Role)}
	case opts.Handles == nil:
		err = errors.New("runtime: TurnOptions.Handles is required")
	case len(opts.TurnID) > 256 || strings.ContainsAny(opts.TurnID, "\x00\n"):
		err = &store.ValidationError{Kind: store.ErrInvalid, Field: "turn_id", Reason: "must be at most 256 bytes, one line"}
	default:
		err = opts.checkMode()
	}
	if err != nil {
		return msg, opts, counter, err
	}
	opts.Pack.Policy.MinRecentTurns = max(1, opts.Pack.Policy.MinRecentTurns) // the new message is hot
	counter, err = c.st.rt.packCounter(&opts.Pack)
	return msg, opts, counter, err
}

func (c Conversation) turn(ctx context.Context, msg store.Message, opts TurnOptions) (TurnResult, error) {
	now := c.st.rt.opts.Now
	started := now()
	msg, opts, counter, err := c.prepareTurn(msg, opts)
	if err != nil {
		return TurnResult{}, err
	}
	id := opts.TurnID
	// Turns on one conversation run one at a time, across processes on a
	// shared store: each sees the one before it whole (its user message,
	// its answer), and its own messages are adjacent. Even when cancelled
	// a turn waits for the one before it: then it runs cancelled, and
	// records its user message and a failed receipt in order, as a
	// running turn does.
	unlock, err := c.st.db.LockConversation(context.WithoutCancel(ctx), c.id)
	if err != nil {
		return TurnResult{}, err
	}
	defer unlock()
	// A turn before this one whose process ended before its receipt is
	// recorded as failed (interrupted.go): it is never silent.
	if _, err := c.recordInterrupted(id); err != nil {
		return TurnResult{}, err
	}
	// The user message comes first, under the turn's key: a retry with the
	// same message finds it and writes nothing, one with other content is
	// refused (store.ErrIdempotencyMismatch) before any answer is given.
	user, err := c.Append(msg, AppendOptions{IdempotencyKey: turnKey(id, "user"), Encodings: opts.Encodings})
	if err != nil {
		return TurnResult{}, err
	}
	prev, err := c.Receipt(id)
	switch {
	case err == nil && prev.Status == StatusCompleted:
		return c.storedTurn(prev)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return TurnResult{}, err
	}
	t := &turn{c: c, opts: opts, id: id, base: counter, counter: counter, user: user, now: now, started: started, log: c.turnLogger(id),
		estimating: counter.Encoding() == nil && opts.Pack.CountText == nil, sent: map[string][]RecipeMessage{}}
	k := t.calibration(t.provider())
	if k != nil {
		t.counter = counter.Calibrated(k.Ratio, k.SafetyPercent)
	}
	t.receipt = Receipt{TurnID: id, Attempt: prev.Attempt + 1, UserSeq: user.Seq, Counter: counterID(counter, opts.Pack.Model, k)}
	t.emit(TurnEvent{Kind: "started"})
	res, err := t.run(ctx)
	if err != nil {
		return TurnResult{}, t.fail(err)
	}
	return res, nil
}

// turn is the state of one running turn.
type turn struct {
	c       Conversation
	opts    TurnOptions
	id      string
	counter tokenizer.Counter
	user    store.Record
	now     func() time.Time // the runtime's clock (Options.Now)
	started time.Time
	log     *slog.Logger // with the conversation and turn ids

	// base is the counter without calibration; estimating says it is the
	// estimator, which each call's reported usage calibrates
	// (calibration.go).
	base       tokenizer.Counter
	estimating bool

	mu       sync.Mutex // protects the fields below: plan steps run in parallel
	receipt  Receipt
	ledger   *pack.Ledger
	composed *composedCall              // the root planner request Compose just built
	stable   int64                      // window(stable): the start of this turn's window, once packed
	rounds   []tokenizer.Message        // a direct turn's tool calls and results, as last sent
	images   map[string][]store.Part    // by tool call id: images of results, stored with them (mcp.go)
	whole    map[string]string          // by tool call id: a result the model read an excerpt of (direct.go)
	sent     map[string][]RecipeMessage // the last request of each sequential kind (planner, respond), for its breakpoints
	previous map[string][]RecipeMessage // the previous turn's first request of each kind; nil until read
	sending  int                        // calls in send
	idle     chan struct{}              // closed when sending drops to 0
	ended    bool                       // the turn failed: no call starts (settle)
}

func (t *turn) emit(ev TurnEvent) {
	if t.opts.OnEvent != nil {
		ev.TurnID = t.id
		t.opts.OnEvent(ev)
	}
}

func (t *turn) run(ctx context.Context) (TurnResult, error) {
	ref, meta, err := t.c.ColdContext(ctx, t.opts.Handles, t.opts.Cold)
	if err != nil {
		return TurnResult{}, &TurnError{Kind: "completion_failed", Cause: err}
	}
	defer t.opts.Handles.Delete(ref) // exactly this handle, whatever happens
	in := t.opts.Completion
	in.Query = t.user.Message.Content.PlainText()
	in.Goal = fmt.Sprintf("write the assistant's reply to the user's last message (sequence %d) of the conversation above.", t.user.Seq)
	in.Context = plan.ContextRef{Ref: ref, Metadata: meta}
	if in.Capabilities == nil {
		in.Capabilities = []plan.Capability{{Kind: "context", Name: "peek"}, {Kind: "context", Name: "slice"}, {Kind: "context", Name: "search"}}
		for _, p := range in.Providers {
			in.Capabilities = append(in.Capabilities, plan.Capability{Kind: "model", Name: p})
		}
	}
	in.Compose, in.ToolResult = t.composePlanner, t.toolResult
	if t.opts.Mode == ModeDirect {
		in.Plan = plan.DirectPlan(in.Providers[0]) // checkMode: there is one
	}
	if in.Budget == nil {
		// Every call of a turn may carry the whole context: the default token
		// budget is the ceiling times the model calls the budget allows.
		b := plan.DefaultBudget()
		b.MaxTotalTokens = max(b.MaxTotalTokens, b.MaxModelCalls*int(t.opts.Pack.Policy.Effective()))
		in.Budget = &b
	}
	onEvent := in.OnEvent
	in.OnEvent = func(ev plan.Event) {
		if onEvent != nil {
			onEvent(ev)
		}
		t.emit(TurnEvent{Kind: "step", Step: &ev})
	}
	deps := t.opts.Deps
	deps.Contexts = t.opts.Handles
	deps.Planner = recordingPlanner{t: t, inner: deps.Planner}
	if deps.Models != nil {
		deps.Models = turnModels{t: t, inner: deps.Models}
	}
	if t.opts.MCP != nil && len(t.opts.MCP.Grants) > 0 {
		if err := t.offerMCP(ctx, &in, &deps); err != nil {
			return TurnResult{}, err
		}
	}
	if t.c.st.rt.tracer != nil {
		deps.Contexts = tracedContexts{t: t, inner: deps.Contexts}
		if deps.Tools != nil {
			deps.Tools = tracedTools{t: t, inner: deps.Tools}
		}
	}
	began := t.now()
	out, err := plan.Complete(ctx, in, deps)
	t.receipt.Timings.CompletionMS = ms(t.now().Sub(began))
	if out != nil {
		t.receipt.Usage = out.Usage
		if out.Plan != nil {
			t.receipt.Plan = out.Plan.String()
		}
		for _, e := range out.Trajectory.Events {
			t.receipt.Trajectory = append(t.receipt.Trajectory, ReceiptStep{Op: e.Op, Status: e.Status, Error: string(e.Error), Depth: e.Depth})
		}
	}
	if err != nil {
		var te *TurnError
		if errors.As(err, &te) {
			return TurnResult{}, te
		}
		return TurnResult{}, &TurnError{Kind: "completion_failed", Cause: err}
	}
	value := out.Value
	t.mu.Lock()
	if r, isModel := value.(plan.ModelResult); isModel {
		// A plan that ends with a model step answers with the model's text;
		// the rest of its response is the receipt's.
		value, t.receipt.Response = r.Text, &ReceiptResponse{Model: r.Model, Reasoning: r.Reasoning}
	}
	text, kind := assistantText(value)
	t.receipt.Status, t.receipt.ValueType = StatusCompleted, kind
	t.mu.Unlock()
	asst := store.Message{Role: store.RoleAssistant, Content: store.TextContent(text)}
	texts, _, err := t.externalize()
	if err != nil {
		return TurnResult{}, &TurnError{Kind: "receipt_failed", Cause: err}
	}
	receiptFor := func(r store.Record) ([]store.DocPut, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.receipt.AssistantSeq = r.Seq
		t.receipt.Timings.TotalMS = ms(t.now().Sub(t.started)) // the time to store it is not counted
		body, err := json.Marshal(t.receipt)
		return append(texts, store.DocPut{Collection: receiptCollection, Key: t.id, Body: body}), err
	}
	rec, err := t.c.Append(asst, AppendOptions{IdempotencyKey: turnKey(t.id, "assistant"), Encodings: t.opts.Encodings, Docs: receiptFor,
		Before: t.toolMessages()})
	if err != nil {
		return TurnResult{}, &TurnError{Kind: "receipt_failed", Cause: err}
	}
	t.mu.Lock()
	var start int64
	if c := t.receipt.Context; c != nil {
		start = c.Boundary.ColdThrough + 1
	}
	t.c.st.rt.recipes.put(t.c.st.id+"\x00"+t.c.id+"\x00"+t.id, cachedTurn{firstRecipes(t.receipt), start})
	res := TurnResult{TurnID: t.id, User: t.user, Assistant: rec, Receipt: t.receipt, Value: value}
	t.mu.Unlock()
	t.emit(TurnEvent{Kind: "finished"})
	return res, nil
}

// fail stores a failed receipt for err and returns the TurnError. The
// calls still in flight (the completion returns as soon as its context
// ends, without waiting for them) record their attempts first.
func (t *turn) fail(err error) error {
	t.settle()
	te := &TurnError{Kind: "completion_failed", Cause: err}
	errors.As(err, &te)
	te.TurnID, te.User = t.id, &t.user
	t.mu.Lock()
	te.Ledger = t.ledger
	t.receipt.Status = StatusFailed
	t.receipt.Error = &ReceiptError{Kind: te.Kind, Message: te.Cause.Error()}
	t.receipt.Timings.TotalMS = ms(t.now().Sub(t.started))
	t.mu.Unlock()
	if texts, r, err := t.externalize(); err == nil && t.putFailed(texts, r) == nil {
		te.Receipt = &r
	}
	t.emit(TurnEvent{Kind: "failed", Err: te})
	return te
}

// callGrace bounds how long a failed turn waits for its calls in flight to
// end: an HTTP attempt ends as soon as its context does; a model handler
// that ignores its context is not waited for longer.
const callGrace = 5 * time.Second

// errTurnEnded is the error of a call that would start after its turn
// failed.
var errTurnEnded = errors.New("runtime: the turn has ended")

// beginCall registers a call about to be sent and returns its end, or
// false once the turn has ended (settle).
func (t *turn) beginCall() (end func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil, false
	}
	if t.sending == 0 {
		t.idle = make(chan struct{})
	}
	t.sending++
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.sending--; t.sending == 0 {
			close(t.idle)
		}
	}, true
}

// settle ends the turn's calls: none starts any more, and those in flight
// (at most callGrace) finish recording every attempt they sent, so the
// failed receipt lists each request that reached the wire and why it
// ended — cancelled with the turn, timed out, failed.
func (t *turn) settle() {
	t.mu.Lock()
	t.ended = true
	idle, sending := t.idle, t.sending
	t.mu.Unlock()
	if sending == 0 {
		return
	}
	timer := time.NewTimer(callGrace)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	}
}

// putFailed writes a failed run's receipt after the texts it refers to.
func (t *turn) putFailed(texts []store.DocPut, r Receipt) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	for _, d := range append(texts, store.DocPut{Collection: receiptCollection, Key: t.id, Body: body}) {
		if _, err := t.c.st.db.PutDoc(t.c.id, d); err != nil {
			return err
		}
	}
	return nil
}

// externalize keeps the receipt's large literal messages by reference
// (see externalize in receipt.go) and returns the documents of those the
// conversation does not hold yet, with the receipt as it is then.
func (t *turn) externalize() ([]store.DocPut, Receipt, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	texts, err := externalize(&t.receipt, func(ref string) bool {
		_, err := t.c.st.db.GetDoc(t.c.id, textCollection, ref, 1)
		return err == nil
	})
	return texts, t.receipt, err
}

// assistantText is the stored form of a completion's value: text as is,
// anything else its canonical JSON (never a lossy term string).
func assistantText(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return v, "text"
	case plan.Atom:
		return string(v), "text"
	}
	return plan.Encode(v), "json"
}

// composePlanner is the planner's request: the prompt's stable parts as
// leading system messages, the packed conversation, and the goal (with
// the caller's instruction and any feedback) as the final user message —
// one pack, so the whole request is under the ceiling and each part is a
// ledger stage.
func (t *turn) composePlanner(ctx context.Context, parts []plan.PromptPart, base tokenizer.Request) (tokenizer.Request, error) {
	var head, trailer []pack.TextSection
	for _, p := range parts {
		s := pack.TextSection{Name: p.Name, Visibility: pack.Model, Text: p.Text}
		switch p.Name {
		case "goal", "instruction", "feedback":
			s.Role = tokenizer.RoleUser
			trailer = append(trailer, s)
		default:
			head = append(head, s)
		}
	}
	// The planner's instructions and grammar lead (the same for every turn:
	// a cacheable prefix), then the caller's sections, then what this
	// completion fixes.
	n := min(2, len(head)) // instructions, plan_grammar
	sections := slices.Concat(head[:n], t.opts.Pack.Sections, head[n:])
	req, cc, err := t.compose(ctx, "planner", t.provider(), sections, mergeUser(trailer), base)
	if err != nil {
		return req, err
	}
	t.mu.Lock()
	t.composed = &cc
	t.mu.Unlock()
	return req, nil
}

// provider is the turn's provider: the first the completion names ("" for
// none).
func (t *turn) provider() string {
	if ps := t.opts.Completion.Providers; len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// stableStart is where window(stable) starts this turn's request: where
// an earlier request of the turn started it, else where the previous
// turn's planner request did (its boundary's ColdThrough + 1), else 0.
func (t *turn) stableStart() int64 {
	t.mu.Lock()
	s := t.stable
	t.mu.Unlock()
	if s > 0 {
		return s
	}
	prev, err := t.c.Message(t.user.Seq - 1)
	if err != nil {
		return 0
	}
	id, role, _ := turnOf(prev.IdempotencyKey)
	if role != "assistant" {
		return 0
	}
	if ct, ok := t.c.st.rt.recipes.get(t.c.st.id + "\x00" + t.c.id + "\x00" + id); ok {
		return ct.stableStart
	}
	r, err := t.c.Receipt(id)
	if err != nil || r.Context == nil {
		return 0
	}
	return r.Context.Boundary.ColdThrough + 1
}

// previousRecipes are the first requests of each kind (planner, model,
// respond) of the turn before this one — the turn whose assistant message
// precedes this user message —, read once per turn.
func (t *turn) previousRecipes() map[string][]RecipeMessage {
	t.mu.Lock()
	p := t.previous
	t.mu.Unlock()
	if p != nil {
		return p
	}
	p = map[string][]RecipeMessage{}
	if prev, err := t.c.Message(t.user.Seq - 1); err == nil {
		if id, role, _ := turnOf(prev.IdempotencyKey); role == "assistant" {
			if ct, ok := t.c.st.rt.recipes.get(t.c.st.id + "\x00" + t.c.id + "\x00" + id); ok {
				p = ct.recipes
			} else if r, err := t.c.Receipt(id); err == nil {
				p = firstRecipes(r)
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.previous == nil {
		t.previous = p
	}
	return t.previous
}

// firstRecipes are the recipes of a receipt's first root call of each
// kind.
func firstRecipes(r Receipt) map[string][]RecipeMessage {
	out := map[string][]RecipeMessage{}
	for _, call := range r.Calls {
		if _, seen := out[call.Kind]; !seen && call.Depth == 0 {
			out[call.Kind] = call.Recipe.Messages
		}
	}
	return out
}

// recipeCache keeps the first recipes of the turns that completed in
// this process, so that the next turn's cache prefix and breakpoints need
// no receipt read (a receipt holds every call's recipe: decoding one
// costs more than the rest of a turn's bookkeeping).
type recipeCache struct {
	mu sync.Mutex // protects m
	m  map[string]cachedTurn
}

const recipeCacheSize = 256

// cachedTurn is what the next turn needs of a completed one: its first
// request's recipe of each kind (the cache prefix, the breakpoints) and
// its window's start (window(stable)).
type cachedTurn struct {
	recipes     map[string][]RecipeMessage
	stableStart int64
}

func (rc *recipeCache) get(key string) (cachedTurn, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ct, ok := rc.m[key]
	return ct, ok
}

func (rc *recipeCache) put(key string, ct cachedTurn) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.m == nil || len(rc.m) >= recipeCacheSize {
		rc.m = map[string]cachedTurn{}
	}
	rc.m[key] = ct
}

// composedCall is what a call's receipt entry needs of the request it
// sends: its local count, the recipe that renders it again, and the
// calibration its pack used (nil when none).
type composedCall struct {
	count  tokenizer.Count
	recipe []RecipeMessage
	calib  *Calibration
}

// mergeUser joins consecutive user sections into one message: the goal,
// the instruction and the feedback are one request to the planner.
func mergeUser(ss []pack.TextSection) []pack.TextSection {
	if len(ss) == 0 {
		return nil
	}
	var sb strings.Builder
	names := make([]string, len(ss))
	for i, s := range ss {
		sb.WriteString(s.Text)
		names[i] = s.Name
	}
	return []pack.TextSection{{Name: strings.Join(names, "+"), Visibility: pack.Model, Role: tokenizer.RoleUser, Text: sb.String()}}
}

// compose packs the conversation between sections and trailer under the
// turn's ceiling, with base's response format and generation cap, for a
// call of kind (planner, model or respond) to providerName: the request
// (its cache breakpoints marked) and what its receipt entry needs. The
// pack of a planner call or a respond round is the receipt's context
// (what decided the turn).
func (t *turn) compose(ctx context.Context, kind, providerName string, sections, trailer []pack.TextSection, base tokenizer.Request) (tokenizer.Request, composedCall, error) {
	planner := kind != "model"
	po := t.opts.Pack
	if po.Policy.Window == pack.Stable {
		po.StableStart = t.stableStart()
	}
	po.Calibration = t.calibration(providerName)
	// A plan's tools are described to the planner in text (tool_schemas);
	// only a respond round offers native function calls (base.Tools).
	po.Sections, po.Trailer, po.Tools = sections, trailer, base.Tools
	if base.ResponseFormat != nil {
		po.Format, po.FormatFree = base.ResponseFormat, t.opts.Completion.SchemaFree
	}
	maxTokens := base.MaxTokens
	began := t.now()
	pctx, span := t.startPackSpan(ctx, planner)
	cp, err := t.c.Pack(pctx, po)
	endPackSpan(span, cp, err)
	if err == nil && t.log.Enabled(ctx, slog.LevelDebug) {
		t.log.LogAttrs(ctx, slog.LevelDebug, "pack", slog.Bool("planner", planner), slog.Int64("tokens", cp.Ledger.Total),
			slog.Int64("limit", cp.Ledger.Limit), slog.Int("units", len(cp.Selected)), slog.String("solver", cp.Status.String()))
	}
	t.mu.Lock()
	t.receipt.Timings.PackMS += ms(t.now().Sub(began))
	if err == nil && planner {
		t.ledger = &cp.Ledger
		t.receipt.Context = receiptPack(cp)
	}
	if err == nil && po.Policy.Window == pack.Stable {
		t.stable = cp.Boundary.ColdThrough + 1 // the turn's later requests keep this window
	}
	t.mu.Unlock()
	if err != nil {
		return tokenizer.Request{}, composedCall{}, &TurnError{Kind: "context_budget_failed", Cause: err}
	}
	t.emit(TurnEvent{Kind: "context", Ledger: &cp.Ledger})
	req := cp.Request
	if r := po.Policy.ReserveOutputTokens; r > 0 && int64(maxTokens) > r {
		maxTokens = int(r) // the reply must fit in the reserve the ceiling kept
	}
	req.MaxTokens = maxTokens
	cc := composedCall{count: cp.Counted.Total, recipe: recipeOf(cp, sections, trailer), calib: po.Calibration}
	req.Cache.Breakpoints = t.breakpoints(kind, cp, sections, trailer, cc.recipe)
	return req, cc, nil
}

// send runs one call through do and adds it to the receipt: each HTTP
// attempt the provider reports (provider.WithAttemptTrace), retries and
// failures included, or, when none was sent over HTTP (an in-process
// handler), the call's success as one entry. body is the body do reports
// for a success (nil when no HTTP provider sent it); the error of the
// call, if any, is returned after the receipt has it. A call over HTTP
// teaches the provider's calibration (learn); one the provider refused
// as too long fails the turn as context_length_exceeded.
func (t *turn) send(ctx context.Context, kind, providerName string, depth int, req tokenizer.Request, cc composedCall,
	do func(context.Context) (callOutcome, error)) error {
	end, ok := t.beginCall()
	if !ok {
		return errTurnEnded
	}
	defer end() // after the attempts are in the receipt
	var attempts []provider.Attempt
	ctx, span := t.startCallSpan(ctx, kind, providerName, depth, req, cc)
	out, err := do(provider.WithAttemptTrace(ctx, func(a provider.Attempt) { attempts = append(attempts, a) }))
	var calls []ReceiptCall
	defer func() { t.endCallSpan(span, out, calls, err) }()
	traced := len(attempts) > 0 // HTTP requests, each reported as it ended
	if !traced {
		if err != nil {
			return err // nothing was sent
		}
		attempts = []provider.Attempt{{Body: out.body}}
	}
	for i, a := range attempts {
		u := plan.Usage{}
		if a.Err == nil {
			u = out.usage
		}
		rc, rerr := callRecord(kind, depth, req, a, cc, u, t.c.st.rt.opts.Prices)
		if rerr != nil {
			err = errors.Join(err, rerr)
			return err
		}
		if traced {
			rc.Attempt, rc.Status = i+1, a.Status
		}
		if a.Err != nil {
			rc.Error = a.Err.Error()
		}
		calls = append(calls, rc)
	}
	t.mu.Lock()
	t.receipt.Calls = append(t.receipt.Calls, calls...)
	t.mu.Unlock()
	for _, rc := range calls {
		logCall(ctx, t.log, rc)
	}
	if traced {
		t.learn(providerName, req, out.usage, err)
	}
	if pe := (*provider.Error)(nil); errors.As(err, &pe) && pe.Kind == provider.KindContextLength {
		err = &TurnError{Kind: KindContextLengthExceeded, Cause: err}
	}
	return err
}

// KindContextLengthExceeded is the kind of a turn whose request the
// provider refused as longer than the model's window: its count ran over
// ours. The refusal calibrates the provider's estimates (when the model
// has no known tokenizer), so the turn run again packs a request that
// fits.
const KindContextLengthExceeded = "context_length_exceeded"

// calibration is the ratio a pack for providerName calibrates the
// estimator with, or nil: none learnt yet, or counts are exact.
func (t *turn) calibration(providerName string) *Calibration {
	if !t.estimating || providerName == "" {
		return nil
	}
	return t.c.st.rt.calibrations.get(providerName, t.opts.Pack.Model)
}

// learn teaches providerName's calibration what a call over HTTP
// reported: the prompt tokens of its usage, or the count a refusal as too
// long stated (at least the limit, when it stated none), against the
// estimator's count of the request.
func (t *turn) learn(providerName string, req tokenizer.Request, usage plan.Usage, err error) {
	if !t.estimating || providerName == "" {
		return
	}
	var reported int
	var pe *provider.Error
	switch {
	case err == nil && usage.PromptKnown:
		reported = usage.PromptTokens
	case errors.As(err, &pe) && pe.Kind == provider.KindContextLength:
		reported = pe.PromptTokens
		if reported == 0 {
			reported = max(pe.ContextLimit, int(t.opts.Pack.Policy.Effective())) + 1
		}
	default:
		return
	}
	estimated := t.base.CountRequest(&req).Total.Tokens
	if err := t.c.st.rt.calibrations.observe(providerName, t.opts.Pack.Model, reported, estimated); err != nil {
		t.log.Warn("token calibration not kept", slog.String("error", err.Error()))
	}
}

// checked counts a request composed outside a pack (a child planner's) and
// refuses it over the ceiling: no request of a turn exceeds it (I6).
func (t *turn) checked(req tokenizer.Request) (tokenizer.Count, error) {
	n := t.counter.CountRequest(&req).Total
	if err := t.opts.Pack.Policy.CheckFixed(int64(n.Tokens)); err != nil {
		return n, &TurnError{Kind: "context_budget_failed", Cause: err}
	}
	return n, nil
}

// recordingPlanner sends the planner's requests as composed and records
// each call; a child planner's request (not composed) is checked against
// the ceiling first.
type recordingPlanner struct {
	t     *turn
	inner plan.Planner
}

func (p recordingPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	t := p.t
	t.mu.Lock()
	composed := t.composed
	t.composed = nil
	t.mu.Unlock()
	var cc composedCall
	if composed != nil && req.Depth == 0 {
		cc = *composed
	} else {
		n, err := t.checked(req.Request)
		if err != nil {
			return plan.PlannerReply{}, err
		}
		cc = composedCall{count: n, recipe: literalRecipe(req.Request.Messages), calib: t.receipt.Counter.Calibration}
	}
	if req.Depth == 0 {
		// A direct answer streams as the planner writes it.
		req.OnDelta = plan.NewAnswerScanner(func(text string) { t.emit(TurnEvent{Kind: "delta", Text: text}) }).Write
	}
	var reply plan.PlannerReply
	err := t.send(ctx, "planner", t.provider(), req.Depth, req.Request, cc, func(ctx context.Context) (callOutcome, error) {
		var err error
		reply, err = p.inner.Plan(ctx, req)
		return callOutcome{body: reply.RequestBody, usage: reply.Usage, model: reply.Model, finish: reply.FinishReason, output: reply.Text}, err
	})
	if err != nil {
		return reply, err
	}
	if !reply.Usage.PromptKnown {
		// The budget charges our own count of the prompt, not the crude
		// bytes/3 of an unknown one; the receipt still says the provider
		// reported nothing.
		reply.Usage.PromptTokens, reply.Usage.PromptKnown = cc.count.Tokens, true
	}
	return reply, nil
}

// turnModels runs a plan's model steps inside the conversation: each
// step's request is the packed conversation (with the caller's sections)
// followed by the step's own messages, under the ceiling, and streams its
// text as turn events.
type turnModels struct {
	t     *turn
	inner plan.Models
}

func (m turnModels) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	t := m.t
	sent := call // as the plan built it
	trailer, base := stepTrailer(call)
	req, cc, err := t.compose(ctx, callKind(call), call.Provider, t.opts.Pack.Sections, trailer, base)
	if err != nil {
		return plan.ModelResult{}, err
	}
	gen := call.Request // the step's parameters, with the composed messages
	gen.Messages, gen.Tools, gen.MaxTokens, gen.Cache = req.Messages, req.Tools, req.MaxTokens, req.Cache
	call.Request = gen
	streamed := false
	call.OnDelta = func(text string) {
		streamed = true
		t.emit(TurnEvent{Kind: "delta", Text: text})
	}
	var res plan.ModelResult
	err = t.send(ctx, callKind(call), call.Provider, call.Depth, call.Request, cc, func(ctx context.Context) (callOutcome, error) {
		var err error
		res, err = m.inner.Complete(ctx, call)
		return callOutcome{body: res.RequestBody, usage: res.Usage, model: res.Model, finish: res.FinishReason, output: res.Text, calls: res.ToolCalls}, err
	})
	if err != nil {
		return res, err
	}
	t.noteRounds(sent)
	if !streamed && res.Text != "" {
		t.emit(TurnEvent{Kind: "delta", Text: res.Text})
	}
	if !res.Usage.PromptKnown {
		res.Usage.PromptTokens, res.Usage.PromptKnown = cc.count.Tokens, true
	}
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
