package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// planner answers with fixed plan texts in turn and keeps every request.
type planner struct {
	mu      sync.Mutex
	answers []string
	err     error
	reqs    []tokenizer.Request
}

func (p *planner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req.Request)
	if p.err != nil {
		return plan.PlannerReply{}, p.err
	}
	a := p.answers[0]
	if len(p.answers) > 1 {
		p.answers = p.answers[1:]
	}
	return plan.PlannerReply{Text: a, Usage: plan.Usage{PromptTokens: 7, PromptKnown: true}}, nil
}

// models echoes the text of its request's last message.
type models struct {
	mu   sync.Mutex
	reqs []tokenizer.Request
}

func (m *models) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, call.Request)
	return plan.ModelResult{Text: "model says " + call.Prompt()}, nil
}

func turnOpts(p plan.Planner, reg *handle.Registry) TurnOptions {
	return TurnOptions{
		Pack: PackOptions{Policy: pack.Policy{MaxContextTokens: 100000, ProviderContextTokens: 100000, ReserveOutputTokens: 500,
			MinRecentTurns: 2, MaxCandidates: 64, Overflow: "deny", Window: pack.Contiguous},
			Model: "gpt-4o-2024-08-06", Boundary: true, BoundaryTemplates: []string{"Cold history boundary: sequences 1..{cold_through} may be absent."},
			Utilities: testUtilities},
		Encodings:  []string{"o200k_base"},
		Completion: plan.Input{Providers: []string{"local"}},
		Deps:       plan.Deps{Planner: p},
		Handles:    reg,
	}
}

func final(text string) string {
	return `{"steps":[{"op":"final","value":"` + text + `"}]}`
}

func TestTurnStoresTheReplyAndAReceipt(t *testing.T) {
	eachBackend(t, testTurnStoresTheReplyAndAReceipt)
}

func testTurnStoresTheReplyAndAReceipt(t *testing.T, be backend) {
	c := be.conv(t, user("earlier question"), store.Message{Role: store.RoleAssistant, Content: store.TextContent("earlier answer")})
	p := &planner{answers: []string{final("hello back")}}
	reg := handle.New(nil)
	res, err := c.Turn(context.Background(), user("hello"), turnOpts(p, reg))
	if err != nil {
		t.Fatal(err)
	}
	if res.User.Seq != 3 || res.Assistant.Seq != 4 || res.Assistant.Message.Content.Text != "hello back" || res.Replayed {
		t.Fatalf("result %+v", res)
	}
	r, err := c.Receipt(res.TurnID)
	if err != nil || r.Status != StatusCompleted || r.AssistantSeq != 4 || r.UserSeq != 3 || len(r.Calls) != 1 || r.ValueType != "text" {
		t.Fatalf("receipt %+v, %v", r, err)
	}
	// The hash is the SHA-256 of the body a provider sends for the request
	// the planner got.
	body, _ := provider.Body(&p.reqs[0], false)
	sum := sha256.Sum256(body)
	if r.Calls[0].RequestSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatal("request_sha256 is not the hash of the body")
	}
	if r.Calls[0].ProviderPromptTokens == nil || *r.Calls[0].Difference != 7-r.Calls[0].LocalPromptTokens {
		t.Fatalf("usage vs local: %+v", r.Calls[0])
	}
	// The planner saw its instructions first, the conversation, and the goal
	// last; the user's message once.
	req := p.reqs[0]
	last := req.Messages[len(req.Messages)-1]
	if req.Messages[0].Role != "system" || !strings.Contains(req.Messages[0].Content, "root planner") ||
		last.Role != "user" || !strings.Contains(last.Content, "sequence 3") {
		t.Fatalf("planner request %+v", req.Messages)
	}
	seen := 0
	for _, m := range req.Messages {
		seen += strings.Count(m.Content, "hello")
	}
	if seen != 1 {
		t.Fatalf("the user message appears %d times", seen)
	}
	// The ledger has a stage for each prompt part, and sums to its total.
	stages := map[string]bool{}
	sum64 := int64(0)
	for _, s := range r.Context.Stages {
		stages[s.Name] = true
		sum64 += s.Charged
	}
	for _, name := range []string{"instructions", "plan_grammar", "capabilities", "tool_schemas", "budget", "goal", "reply_priming"} {
		if !stages[name] {
			t.Errorf("no ledger stage %s: %v", name, stages)
		}
	}
	if sum64 != r.Context.Total {
		t.Errorf("stages sum to %d, total %d", sum64, r.Context.Total)
	}
	if reg.Live() != 0 {
		t.Fatalf("%d handles left", reg.Live())
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// TestTurnIsIdempotent (I8): the same turn id after a success returns the
// stored result without a model call; after a failure it reuses the user
// message, and never duplicates it.
func TestTurnIsIdempotent(t *testing.T) { eachBackend(t, testTurnIsIdempotent) }

func testTurnIsIdempotent(t *testing.T, be backend) {
	c := be.conv(t)
	reg := handle.New(nil)
	p := &planner{err: errors.New("provider down")}
	opts := turnOpts(p, reg)
	opts.TurnID = "t1"
	_, err := c.Turn(context.Background(), user("question"), opts)
	var te *TurnError
	if !errors.As(err, &te) || te.Kind != "completion_failed" || te.User == nil || te.User.Seq != 1 || te.Receipt == nil {
		t.Fatalf("failure: %v", err)
	}
	if r, _ := c.Receipt("t1"); r.Status != StatusFailed || r.Error == nil {
		t.Fatalf("failed receipt %+v", r)
	}
	if reg.Live() != 0 {
		t.Fatal("a failed turn left its handle")
	}
	p.err, p.answers = nil, []string{final("answer")}
	res, err := c.Turn(context.Background(), user("question"), opts)
	if err != nil || res.User.Seq != 1 || res.Assistant.Seq != 2 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	calls := len(p.reqs)
	again, err := c.Turn(context.Background(), user("question"), opts)
	if err != nil || !again.Replayed || again.Assistant.Message.Content.Text != "answer" || len(p.reqs) != calls {
		t.Fatalf("replayed: %+v %v (calls %d → %d)", again, err, calls, len(p.reqs))
	}
	if st, _ := c.Stats(); st.Messages != 2 {
		t.Fatalf("%d messages after retries", st.Messages)
	}
	if r, _ := c.Receipt("t1"); r.Attempt != 2 || r.Version != 2 {
		t.Fatalf("receipt attempt %d version %d", r.Attempt, r.Version)
	}
	// The same id with another message is refused, and stores nothing.
	if _, err := c.Turn(context.Background(), user("Delete the production database now"), opts); !errors.Is(err, store.ErrIdempotencyMismatch) {
		t.Fatalf("reuse with other text: %v", err)
	}
	if st, _ := c.Stats(); st.Messages != 2 || len(p.reqs) != calls {
		t.Fatalf("%d messages, %d planner calls after a reused id", st.Messages, len(p.reqs))
	}
}

// TestReceiptTimings: a completed turn's stored receipt says how long the
// turn took, by the runtime's clock (here one that advances 5 ms a read).
func TestReceiptTimings(t *testing.T) {
	var mu sync.Mutex
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(5 * time.Millisecond)
		return clock
	}
	c := memConvWith(t, &Options{Now: now})
	res, err := c.Turn(context.Background(), user("hello"), turnOpts(&planner{answers: []string{final("hi")}}, handle.New(nil)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Receipt(res.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	tm := r.Timings
	if tm.TotalMS <= 0 || tm.CompletionMS <= 0 || tm.PackMS <= 0 || tm.TotalMS < tm.CompletionMS || tm != res.Receipt.Timings {
		t.Fatalf("stored timings %+v, result's %+v", tm, res.Receipt.Timings)
	}
}

// httpPlanner asks an OpenAI-compatible server for the plan, as the host's
// provider planner does.
type httpPlanner struct{ p *provider.Client }

func (h httpPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	resp, err := h.p.Complete(ctx, req.Request)
	return plan.PlannerReply{Text: resp.Content, Usage: plan.Usage(resp.Usage), Model: resp.Model, FinishReason: resp.FinishReason,
		RequestBody: resp.RequestBody}, err
}

// TestFailedReceiptListsEveryAttempt: a planner call that fails after
// retries leaves a failed receipt with one entry per request sent — the
// hash of the bytes the server received, the local count, the status and
// the error — and replay renders each again, byte for byte.
func TestFailedReceiptListsEveryAttempt(t *testing.T) {
	srv := providertest.NewServer(providertest.Reply(503, `{"error":{"message":"overloaded"}}`))
	defer srv.Close()
	p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m", MaxRetries: 2, RetryBaseDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := memConv(t)
	opts := turnOpts(httpPlanner{p}, handle.New(nil))
	opts.TurnID = "t1"
	if _, err := c.Turn(context.Background(), user("question"), opts); err == nil {
		t.Fatal("the turn succeeded against a server that answers 503")
	}
	r, err := c.Receipt("t1")
	received := srv.Requests()
	if err != nil || r.Status != StatusFailed || len(received) != 3 || len(r.Calls) != 3 {
		t.Fatalf("receipt %+v (%v) after %d requests", r, err, len(received))
	}
	sum := sha256.Sum256([]byte(received[0].Raw))
	for i, call := range r.Calls {
		if call.Attempt != i+1 || call.Status != 503 || !strings.Contains(call.Error, "overloaded") ||
			call.RequestSHA256 != hex.EncodeToString(sum[:]) || call.LocalPromptTokens == 0 || call.ProviderPromptTokens != nil {
			t.Errorf("call %d = %+v", i+1, call)
		}
	}
	bodies, err := c.Replay(context.Background(), "t1")
	if err != nil || len(bodies) != 3 || string(bodies[2]) != received[2].Raw {
		t.Fatalf("replay: %d bodies, %v", len(bodies), err)
	}
}

// TestFailedReceiptListsTheCallInFlight: a turn that ends while its
// request is on the wire — its completion's time limit, its caller's
// deadline, its caller cancelling it (chat's Ctrl-C, an interrupted rlmpl
// run) — leaves a failed receipt listing that request with its hash and
// why it ended, and replay renders it again.
func TestFailedReceiptListsTheCallInFlight(t *testing.T) {
	interrupted := errors.New("interrupt signal received")
	cases := []struct {
		name   string
		budget time.Duration                                           // the completion's time limit (0: the default)
		ctx    func(started <-chan struct{}) (context.Context, func()) // the caller's context
		reason string
	}{
		{"time limit", 200 * time.Millisecond, func(<-chan struct{}) (context.Context, func()) { return context.Background(), func() {} },
			plan.ErrTimeLimit.Error()},
		{"deadline", 0, func(<-chan struct{}) (context.Context, func()) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, context.DeadlineExceeded.Error()},
		{"cancelled", 0, func(started <-chan struct{}) (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() { <-started; cancel(interrupted) }()
			return ctx, func() { cancel(nil) }
		}, interrupted.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			srv := providertest.NewServer(providertest.Hang(started))
			defer srv.Close()
			p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			c := memConv(t)
			opts := turnOpts(httpPlanner{p}, handle.New(nil))
			opts.TurnID = "t1"
			if tc.budget > 0 {
				b := plan.DefaultBudget()
				b.TimeLimit = tc.budget
				opts.Completion.Budget = &b
			}
			ctx, cancel := tc.ctx(started)
			defer cancel()
			if _, err := c.Turn(ctx, user("question"), opts); err == nil {
				t.Fatal("the turn succeeded against a server that never answers")
			}
			r, err := c.Receipt("t1")
			received := srv.Requests()
			if err != nil || r.Status != StatusFailed || len(received) != 1 || len(r.Calls) != 1 {
				t.Fatalf("receipt %+v (%v) after %d requests", r, err, len(received))
			}
			sum := sha256.Sum256([]byte(received[0].Raw))
			if call := r.Calls[0]; call.Attempt != 1 || call.Status != 0 || call.RequestSHA256 != hex.EncodeToString(sum[:]) ||
				!strings.Contains(call.Error, tc.reason) {
				t.Errorf("call %+v, want attempt 1 with no status, ended by %q", call, tc.reason)
			}
			if bodies, err := c.Replay(context.Background(), "t1"); err != nil || len(bodies) != 1 || string(bodies[0]) != received[0].Raw {
				t.Fatalf("replay: %d bodies, %v", len(bodies), err)
			}
		})
	}
}

// TestTurnKeepsColdHistoryOutButSearchable: an evicted old turn is not in
// any request; the boundary is; a plan searches the handle and a model step
// answers from the packed conversation.
func TestTurnKeepsColdHistoryOutButSearchable(t *testing.T) {
	eachBackend(t, testTurnKeepsColdHistoryOutButSearchable)
}

func testTurnKeepsColdHistoryOutButSearchable(t *testing.T, be backend) {
	var old []store.Message
	old = append(old, user(strings.Repeat("x ", 300)+"ancient-needle"))
	for range 6 {
		old = append(old, user(strings.Repeat("filler words ", 40)))
	}
	c := be.conv(t, old...)
	p := &planner{}
	reg := handle.New(nil)
	m := &models{}
	opts := turnOpts(p, reg)
	opts.Pack.Policy.MaxContextTokens = 3600
	opts.Deps.Models = m
	opts.Completion.ContextLimits = handle.Limits{MaxResults: 4, MaxBytes: 4096}
	var events []string
	var mu sync.Mutex
	opts.OnEvent = func(ev TurnEvent) { mu.Lock(); events = append(events, ev.Kind); mu.Unlock() }
	p.answers = []string{`{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"ancient-needle"},"bind":"hits"},` +
		`{"op":"model","provider":"local","prompt":{"ref":"input","name":"query"},"bind":"a"},{"op":"final","value":{"ref":"var","name":"hits"}}]}`}
	opts.TurnID = "t2"
	res, err := c.Turn(context.Background(), user("find the old marker"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Assistant.Message.Content.Text, "ancient-needle") || res.Receipt.ValueType != "json" {
		t.Fatalf("assistant %q (%s)", res.Assistant.Message.Content.Text, res.Receipt.ValueType)
	}
	for _, req := range append(p.reqs, m.reqs...) {
		for _, msg := range req.Messages {
			if strings.Contains(msg.Content, "ancient-needle") && msg.Role != "user" {
				t.Fatalf("the evicted turn reached a request: %q", msg.Content[:40])
			}
		}
	}
	boundary := false
	for _, msg := range p.reqs[len(p.reqs)-1].Messages {
		boundary = boundary || strings.HasPrefix(msg.Content, "Cold history boundary")
	}
	if !boundary {
		t.Fatal("no boundary in the planner request")
	}
	// The model step continued the conversation: its request is the packed
	// conversation and the step's prompt, counted and recorded.
	last := m.reqs[0].Messages[len(m.reqs[0].Messages)-1]
	if len(m.reqs[0].Messages) < 3 || last.Content != "find the old marker" {
		t.Fatalf("model step request %+v", m.reqs[0].Messages)
	}
	if r := res.Receipt; len(r.Calls) != 2 || r.Calls[1].Kind != "model" {
		t.Fatalf("calls %+v", r.Calls)
	}
	mu.Lock()
	joined := strings.Join(events, " ")
	mu.Unlock()
	for _, k := range []string{"started", "context", "step", "delta", "finished"} {
		if !strings.Contains(joined, k) {
			t.Errorf("no %s event in %s", k, joined)
		}
	}
	if _, err := c.Replay(context.Background(), "t2"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// TestTurnOverTheCeilingSendsNothing (I6): when the request cannot fit,
// the turn fails closed before any call; the user message stays.
func TestTurnOverTheCeilingSendsNothing(t *testing.T) {
	eachBackend(t, testTurnOverTheCeilingSendsNothing)
}

func testTurnOverTheCeilingSendsNothing(t *testing.T, be backend) {
	c := be.conv(t)
	p := &planner{answers: []string{final("x")}}
	reg := handle.New(nil)
	opts := turnOpts(p, reg)
	opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ReserveOutputTokens = 900, 100
	_, err := c.Turn(context.Background(), user("hi"), opts)
	var te *TurnError
	var pe *pack.Error
	if !errors.As(err, &te) || te.Kind != "context_budget_failed" || !errors.As(err, &pe) || len(p.reqs) != 0 {
		t.Fatalf("err = %v, %d calls", err, len(p.reqs))
	}
	if st, _ := c.Stats(); st.Messages != 1 || reg.Live() != 0 {
		t.Fatalf("messages %d, handles %d", st.Messages, reg.Live())
	}
}

// TestTurnNeverWidensCapabilities (I5): explicit capabilities are the
// plan's authority; a step outside them is rejected before it runs.
func TestTurnNeverWidensCapabilities(t *testing.T) { eachBackend(t, testTurnNeverWidensCapabilities) }

func testTurnNeverWidensCapabilities(t *testing.T, be backend) {
	c := be.conv(t)
	p := &planner{answers: []string{`{"steps":[{"op":"model","provider":"local","prompt":"x","bind":"a"},{"op":"final","value":"y"}]}`}}
	reg := handle.New(nil)
	opts := turnOpts(p, reg)
	opts.Deps.Models = &models{}
	opts.Completion.Capabilities = []plan.Capability{{Kind: "context", Name: "search"}}
	opts.Completion.PlannerAttempts = 1
	_, err := c.Turn(context.Background(), user("hi"), opts)
	if err == nil || !strings.Contains(err.Error(), "capability") {
		t.Fatalf("err = %v", err)
	}
}

func TestTurnRequiresAUserMessage(t *testing.T) { eachBackend(t, testTurnRequiresAUserMessage) }

func testTurnRequiresAUserMessage(t *testing.T, be backend) {
	c := be.conv(t)
	_, err := c.Turn(context.Background(), store.Message{Role: store.RoleAssistant, Content: store.TextContent("x")}, turnOpts(&planner{}, handle.New(nil)))
	var te *TurnError
	if !errors.As(err, &te) || te.Kind != "turn_requires_user_message" {
		t.Fatalf("err = %v", err)
	}
	if st, _ := c.Stats(); st.Messages != 0 {
		t.Fatal("a refused turn wrote")
	}
}

// TestConcurrentTurns: 8 conversations take turns in parallel; each ends
// with dense user/assistant pairs, no gaps or duplicates.
func TestConcurrentTurns(t *testing.T) {
	rt, _ := New(nil)
	defer rt.Close()
	st, _ := rt.OpenStore(StoreSpec{Memory: true})
	turns := 50
	if testing.Short() {
		turns = 10
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		id := string(rune('a' + i))
		st.Create(id, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := st.Conversation(id)
			reg := handle.New(nil)
			for range turns {
				p := &planner{answers: []string{final("ok")}}
				if _, err := c.Turn(context.Background(), user("q"), turnOpts(p, reg)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range 8 {
		c := st.Conversation(string(rune('a' + i)))
		recs, _ := c.Messages(store.All(), 0)
		if len(recs) != 2*turns {
			t.Fatalf("%d messages", len(recs))
		}
		for j, r := range recs {
			if r.Seq != int64(j+1) || (j%2 == 0) != (r.Message.Role == store.RoleUser) {
				t.Fatalf("message %d: seq %d role %s", j, r.Seq, r.Message.Role)
			}
		}
		if rs, _ := c.Receipts(false); len(rs) != turns {
			t.Fatalf("%d receipts", len(rs))
		}
	}
}

// TestReplayDetectsADifference: a receipt whose recorded hash does not
// match what the store renders fails replay.
func TestReplayDetectsADifference(t *testing.T) { eachBackend(t, testReplayDetectsADifference) }

func testReplayDetectsADifference(t *testing.T, be backend) {
	c := be.conv(t, user("a"), user("b"))
	res, err := c.Turn(context.Background(), user("hello"), turnOpts(&planner{answers: []string{final("x")}}, handle.New(nil)))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Receipt
	r.Calls[0].Recipe.Messages[len(r.Calls[0].Recipe.Messages)-1] = RecipeMessage{Role: "user", Text: "(edited)"}
	body, _ := json.Marshal(r)
	if _, err := c.st.db.PutDoc(c.id, store.DocPut{Collection: receiptCollection, Key: res.TurnID, Body: body}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Replay(context.Background(), res.TurnID); !errors.Is(err, ErrReplayMismatch) {
		t.Fatalf("replay of an edited recipe: %v", err)
	}
}

// TestCachePrefixIsReported: the second turn's planner request shares its
// leading messages (instructions, grammar, capabilities, ..., the first
// turns) with the first's, and the receipt says how many tokens.
func TestCachePrefixIsReported(t *testing.T) { eachBackend(t, testCachePrefixIsReported) }

func testCachePrefixIsReported(t *testing.T, be backend) {
	c := be.conv(t)
	reg := handle.New(nil)
	first, err := c.Turn(context.Background(), user("hello"), turnOpts(&planner{answers: []string{final("hi")}}, reg))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Turn(context.Background(), user("again"), turnOpts(&planner{answers: []string{final("hi")}}, reg))
	if err != nil {
		t.Fatal(err)
	}
	if first.Receipt.CachePrefixTokens != 0 {
		t.Fatalf("first turn prefix %d", first.Receipt.CachePrefixTokens)
	}
	got, total := second.Receipt.CachePrefixTokens, second.Receipt.Calls[0].LocalPromptTokens
	if got < 800 || got >= total {
		t.Fatalf("prefix %d of %d tokens", got, total)
	}
}

// TestTurnChargesNoSchemaOnAGrammarServer: a planner asked for schema plans
// pays for the schema's text, estimated, unless its server applies the
// schema as a sampling grammar (SchemaFree), where it costs nothing.
func TestTurnChargesNoSchemaOnAGrammarServer(t *testing.T) {
	eachBackend(t, testTurnChargesNoSchemaOnAGrammarServer)
}

func testTurnChargesNoSchemaOnAGrammarServer(t *testing.T, be backend) {
	schemaStage := func(free bool) (charged, total int64) {
		c := be.conv(t, user("earlier question"))
		opts := turnOpts(&planner{answers: []string{final("ok")}}, handle.New(nil))
		opts.Completion.StructuredOutput, opts.Completion.SchemaFree = true, free
		res, err := c.Turn(context.Background(), user("hello"), opts)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Receipt(res.TurnID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Context.Stages {
			if s.Name == "response_format" {
				return s.Charged, r.Context.Total
			}
		}
		t.Fatalf("no response_format stage in %+v", r.Context.Stages)
		return 0, 0
	}
	charged, total := schemaStage(false)
	free, freeTotal := schemaStage(true)
	if charged < 100 || free != 0 || freeTotal != total-charged {
		t.Fatalf("schema charged %d (total %d), on a grammar server %d (total %d)", charged, total, free, freeTotal)
	}
}
