package host_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// asyncSession is a session with a memory store and conversations a and b,
// whose turns use the provider at url.
func asyncSession(t *testing.T, url string) *host.Session {
	t.Helper()
	s := newSession(t, nil)
	ctx := context.Background()
	// The task a test started, between queries.
	if err := s.Consult(ctx, "task.pl", ":- dynamic(task_/1).\n"); err != nil {
		t.Fatal(err)
	}
	err := s.Consult(ctx, "async.pl", fmt.Sprintf(`
:- dynamic(conv_/2).
:- dynamic(event_/2).
opts_([completion_options([provider(provider(local, [base_url(%q)]))]), receipt(false)]).
setup_ :- conversation_store_open(memory, ok(S)),
    forall(member(Id, [a, b]), (conversation_create(S, [id(Id)], ok(C)), assertz(conv_(Id, C)))).
seen_(Id, E) :- record_get(E, kind, K), assertz(event_(Id, K)).
`, url))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Once(ctx, "setup_"); err != nil {
		t.Fatal(err)
	}
	return s
}

// hangingServer answers no request: each waits until its client gives up.
// started is closed when the first arrives, released when it was dropped.
func hangingServer(t *testing.T) (srv *providertest.Server, started, released chan struct{}) {
	started, released = make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv = providertest.NewServer(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		<-r.Context().Done()
		close(released)
	})
	t.Cleanup(srv.Close)
	return srv, started, released
}

func waitFor(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// prologErrorText is the writeq text of the exception err carries.
func prologErrorText(err error) string {
	var pe *host.PrologError
	if errors.As(err, &pe) {
		return pe.Text
	}
	return fmt.Sprint(err)
}

// TestAsyncTurnsKeepOrderPerConversation: turns started together run one
// at a time per conversation, in the order started, whatever order they
// are awaited in; events are delivered inside the await.
func TestAsyncTurnsKeepOrderPerConversation(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"done"}]}`, 10, 5))
	defer srv.Close()
	s := asyncSession(t, srv.BaseURL())
	got, err := s.Once(context.Background(), `
    opts_(O),
    findall(Id-T, ( member(Id, [a, b, a, b, a]), conv_(Id, C),
                    conversation_turn_async(C, message(user, Id), [on_event(seen_(Id))|O], ok(T)) ), Tasks),
    reverse(Tasks, Backwards),
    forall(member(_-T, Backwards), conversation_turn_await(T, infinite, ok(_))),
    findall(Id-Roles, ( member(Id, [a, b]), conv_(Id, C),
                        conversation_messages(C, all, [], ok(Ms)),
                        findall(R, (member(M, Ms), record_get(M, role, R)), Roles) ), Transcripts),
    aggregate_all(count, event_(_, finished), Finished)`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[a-[user,assistant,user,assistant,user,assistant],b-[user,assistant,user,assistant]]"; got["Transcripts"] != want {
		t.Errorf("transcripts = %s, want %s", got["Transcripts"], want)
	}
	if got["Finished"] != "5" {
		t.Errorf("finished events = %s, want 5", got["Finished"])
	}
	// Awaited once, a task is forgotten.
	_, err = s.Once(context.Background(), `conv_(a, C), opts_(O), conversation_turn_async(C, message(user, "x"), O, ok(T)),
        conversation_turn_await(T, infinite, ok(_)), conversation_turn_await(T, 1, _)`)
	if !strings.Contains(prologErrorText(err), "existence_error(turn_task") {
		t.Errorf("second await: %v", err)
	}
}

// TestAsyncTurnTimesOutAndCancels: an await that times out leaves the turn
// running; a cancelled turn fails with its user message stored and a failed
// receipt, and the model call in flight is abandoned.
func TestAsyncTurnTimesOutAndCancels(t *testing.T) {
	srv, started, released := hangingServer(t)
	s := asyncSession(t, srv.BaseURL())
	ctx := context.Background()
	if _, err := s.Once(ctx, `conv_(a, C), opts_(O), conversation_turn_async(C, message(user, "hello"), [turn_id(t1)|O], ok(T)), assertz(task_(T))`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, started, "the turn sent no request")
	got, err := s.Once(ctx, `
    task_(T), conv_(a, C),
    conversation_turn_await(T, 0.05, error(Pending)),
    conversation_turn_cancel(T),
    conversation_turn_await(T, infinite, error(Failed)),
    record_get(Failed, turn_id, Id),
    conversation_turn_receipt(C, t1, ok(R)), record_get(R, status, Status),
    conversation_stats(C, ok(St)), record_get(St, messages, N)`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got["Pending"], "detail(turn_pending(turn_task(task_1,t1)))") {
		t.Errorf("timed-out await = %s", got["Pending"])
	}
	if got["Id"] != "t1" || got["Status"] != `"failed"` || got["N"] != "1" {
		t.Errorf("cancelled turn: id %s, receipt %s, %s messages", got["Id"], got["Status"], got["N"])
	}
	waitFor(t, released, "the model call was not abandoned")
	// Bad tasks and time-outs are a program's mistakes.
	for goal, want := range map[string]string{
		`conversation_turn_await(nope, 1, _)`:                   "type_error(turn_task",
		`conversation_turn_await(turn_task(task_99, x), 1, _)`:  "existence_error(turn_task",
		`conversation_turn_await(turn_task(task_1, t1), -1, _)`: "existence_error(turn_task", // awaited: forgotten
		`conversation_turn_cancel(_)`:                           "instantiation_error",
	} {
		if _, err := s.Once(ctx, goal); !strings.Contains(prologErrorText(err), want) {
			t.Errorf("%s: %v, want %s", goal, err, want)
		}
	}
	if _, err := s.Once(ctx, `conv_(b, C), opts_(O), conversation_turn_async(C, message(user, "x"), O, ok(T)),
        catch(conversation_turn_await(T, -1, _), error(domain_error(timeout, -1), _), true), conversation_turn_cancel(T)`); err != nil {
		t.Errorf("negative time-out: %v", err)
	}
}

// TestCancelAQueuedTurn: a turn cancelled while it waits for the one
// before it fails as a running one does — its user message stored after
// the earlier turn's, a failed receipt naming the cancellation, the
// reason a cancellation and not an internal error.
func TestCancelAQueuedTurn(t *testing.T) {
	srv, _, _ := hangingServer(t)
	s := asyncSession(t, srv.BaseURL())
	got, err := s.Once(context.Background(), `
    conv_(a, C), opts_(O),
    conversation_turn_async(C, message(user, "first"), [turn_id(t1)|O], ok(T1)),
    conversation_turn_async(C, message(user, "second"), [turn_id(t2)|O], ok(T2)),
    conversation_turn_cancel(T2), conversation_turn_cancel(T1),
    conversation_turn_await(T2, infinite, error(E)),
    record_get(E, detail, completion_failed(Reason)),
    conversation_turn_receipt(C, t2, ok(R)), record_get(R, status, Status), record_get(R, error, RE), record_get(RE, kind, Kind),
    conversation_turn_await(T1, infinite, error(_)),
    conversation_messages(C, all, [], ok(Ms)), findall(Txt, (member(M, Ms), record_get(M, content, Txt)), Texts)`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got["Reason"], "kind(cancelled)") || strings.Contains(got["Reason"], "internal_error") {
		t.Errorf("reason of a queued turn cancelled = %s", got["Reason"])
	}
	if got["Status"] != `"failed"` || got["Kind"] != `"completion_failed"` || got["Texts"] != `["first","second"]` {
		t.Errorf("receipt %s (%s), messages %s", got["Status"], got["Kind"], got["Texts"])
	}
}

// TestCloseCancelsAsyncTurns: closing a session cancels its running turns
// and waits for their cleanup.
func TestCloseCancelsAsyncTurns(t *testing.T) {
	srv, started, released := hangingServer(t)
	s := asyncSession(t, srv.BaseURL())
	if _, err := s.Once(context.Background(), `conv_(a, C), opts_(O), conversation_turn_async(C, message(user, "hi"), O, ok(_))`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, started, "the turn sent no request")
	s.Close()
	waitFor(t, released, "the model call outlived its session")
}

// TestSessionsInParallel: sessions share their library's compiled
// procedures; several started and used at once stay independent.
func TestSessionsInParallel(t *testing.T) {
	h, err := host.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			s, err := h.NewSession(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			enc := []string{"o200k_base", "cl100k_base"}[i%2]
			got, err := s.Once(ctx, fmt.Sprintf(`retractall(conversation_count_encoding(_)), assertz(conversation_count_encoding(%s)),
				conversation_store_open(memory, ok(S)), conversation_create(S, [], ok(C)),
				conversation_append(C, message(user, "hi"), ok(R)), record_get(R, token_counts, Counts),
				findall(E, conversation_count_encoding(E), Es)`, enc))
			if err != nil {
				errs <- err
			} else if got["Es"] != "["+enc+"]" || got["Counts"] != "token_counts(["+enc+"(1)])" {
				errs <- fmt.Errorf("session %d sees %s, counts %s", i, got["Es"], got["Counts"])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// plannerSession is a session with a memory store, conversation a and a
// Prolog planner (its calls go through the async turns' queue).
func plannerSession(t *testing.T) *host.Session {
	t.Helper()
	s := newSession(t, nil)
	err := s.Consult(context.Background(), "planner.pl", `
:- dynamic(conv_/1).
planner_(_, plan([final(literal("done"))])).
opts_([completion_options([planner_handler(planner_)])]).
setup_ :- conversation_store_open(memory, ok(S)), conversation_create(S, [id(a)], ok(C)), assertz(conv_(C)).
texts_(C, Texts) :- conversation_messages(C, all, [], ok(Ms)), findall(T, (member(M, Ms), record_get(M, content, T)), Texts).
% The async turn holds the turn lock once its user message is stored.
stored_(C) :- repeat, conversation_stats(C, ok(St)), record_get(St, messages, N), N >= 1, !.
`)
	if err == nil {
		_, err = s.Once(context.Background(), "setup_")
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAsyncTurnChecksBeforeStarting: what conversation_turn/4 would
// refuse before running (a message that is not a user's, an unknown
// conversation) is conversation_turn_async/4's own outcome, and an
// Outcome that does not unify fails the call: in every case no turn
// starts (a turn nobody could await or cancel).
func TestAsyncTurnChecksBeforeStarting(t *testing.T) {
	s := plannerSession(t)
	ctx := context.Background()
	for _, args := range []string{
		`C, message(assistant, "x")`,
		`C, message([role(tool), content("x"), tool_call_id(c1)])`,
		`conversation_ref([id(nope), store(S)]), message(user, "x")`,
	} {
		call := func(pred string) string {
			t.Helper()
			got, err := s.Once(ctx, `conv_(C), record_get(C, store, S), opts_(O), `+pred+`(`+args+`, [turn_id(t1)|O], Out)`)
			if err != nil {
				t.Fatalf("%s(%s): %v", pred, args, err)
			}
			return got["Out"]
		}
		sync, async := call("conversation_turn"), call("conversation_turn_async")
		if async != sync || !strings.HasPrefix(async, "error(conversation_error(") {
			t.Errorf("conversation_turn_async(%s) = %s, want conversation_turn/4's error outcome %s", args, async, sync)
		}
	}
	if _, err := s.Once(ctx, `conv_(C), opts_(O), \+ conversation_turn_async(C, message(user, "lost"), O, not_an_outcome)`); err != nil {
		t.Errorf("an async turn whose outcome does not unify: %v, want failure", err)
	}
	// Turns of a conversation run in the order started: once a later one
	// has ended, any turn started before it has too.
	got, err := s.Once(ctx, `conv_(C), opts_(O), conversation_turn_async(C, message(user, "kept"), O, ok(T)),
		conversation_turn_await(T, infinite, ok(_)), texts_(C, Texts)`)
	if err != nil || got["Texts"] != `["kept","done"]` {
		t.Errorf("the conversation after the refused async turns: %v, %v; want only the awaited turn", got["Texts"], err)
	}
}

// TestTurnServesAnUnawaitedAsyncTurn: a synchronous turn on a
// conversation whose async turn (not yet awaited) holds the turn lock and
// waits for its Prolog planner serves that planner while it waits: both
// turns complete, in the order started, with no time-out between them.
func TestTurnServesAnUnawaitedAsyncTurn(t *testing.T) {
	s := plannerSession(t)
	got, err := s.Once(context.Background(), `conv_(C), opts_(O),
		conversation_turn_async(C, message(user, "one"), O, ok(T)), stored_(C),
		conversation_turn(C, message(user, "two"), O, ok(_)),
		conversation_turn_await(T, infinite, First), texts_(C, Texts)`)
	if err != nil || !strings.HasPrefix(got["First"], "ok(") || got["Texts"] != `["one","done","two","done"]` {
		t.Errorf("a turn after an unawaited async turn: %v, %v, %v; want both completed in order", got["First"], got["Texts"], err)
	}
}
