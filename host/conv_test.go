package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/store/pgtest"
)

// eachDurableSpec runs f as a subtest per durable backend, with the
// conversation_store_open/2 spec of a fresh store: a badger directory
// under the state directory, an SQLite file there, a PostgreSQL schema of
// its own.
func eachDurableSpec(t *testing.T, f func(t *testing.T, spec string)) {
	t.Run("badger-disk", func(t *testing.T) { f(t, "persist(store)") })
	t.Run("sqlite", func(t *testing.T) { f(t, "'sqlite:store.db'") })
	t.Run("postgres", func(t *testing.T) { f(t, "postgres('"+pgtest.DSN(t)+"')") })
}

// TestPersistentConversationSurvivesReopen: the upstream persistence
// scenario, on a real badger directory and on PostgreSQL, across hosts (as
// across runs).
func TestPersistentConversationSurvivesReopen(t *testing.T) {
	eachDurableSpec(t, testPersistentConversationSurvivesReopen)
}

func testPersistentConversationSurvivesReopen(t *testing.T, spec string) {
	state := t.TempDir()
	ctx := context.Background()
	run := func(goal string) map[string]string {
		t.Helper()
		h, err := host.New(&host.Options{StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		s, err := h.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Once(ctx, goal)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	run(`conversation_store_open(` + spec + `, ok(S)),
		conversation_create(S, [id(durable_conversation)], ok(C)),
		conversation_append(C, message(user, "survives restart"), ok(_)),
		conversation_store_close(S, ok(closed))`)
	got := run(`conversation_store_open(` + spec + `, ok(S)),
		conversation_open(S, durable_conversation, ok(C)),
		conversation_message(C, 1, ok(M)), M = conversation_message(P), memberchk(content(T), P), atom_chars(A, T),
		memberchk(ref(Ref), P),
		conversation_list(S, [], ok(L)), length(L, N),
		conversation_append(C, message(assistant, "next"), ok(R2)), R2 = conversation_message(P2), memberchk(sequence(Seq), P2),
		conversation_store_close(S, ok(closed))`)
	if got["A"] != "'survives restart'" || got["N"] != "1" || got["Seq"] != "2" || !strings.Contains(got["Ref"], "sequence(1)") {
		t.Fatalf("after reopen: %v", got)
	}
}

// TestReopenedStoreGivesAFreshColdHandle: the upstream scenario — a cold
// handle over a reopened persistent store finds old turns through the index
// without the transcript being copied anywhere.
func TestReopenedStoreGivesAFreshColdHandle(t *testing.T) {
	eachDurableSpec(t, testReopenedStoreGivesAFreshColdHandle)
}

func testReopenedStoreGivesAFreshColdHandle(t *testing.T, spec string) {
	state := t.TempDir()
	ctx := context.Background()
	for i, goal := range []string{
		`conversation_store_open(` + spec + `, ok(S)), conversation_create(S, [id(cold_persist)], ok(C)),
		 conversation_append(C, message(user, "durable ancient-needle"), ok(_)),
		 conversation_cold_context(C, [], ok(context_ref(P))), memberchk(handle(H), P), context_delete(H, ok(_)),
		 conversation_store_close(S, ok(closed))`,
		`conversation_store_open(` + spec + `, ok(S)), conversation_open(S, cold_persist, ok(C)),
		 conversation_cold_context(C, [], ok(context_ref(P))), memberchk(handle(H), P),
		 context_search(H, "ancient-needle", [], ok(context_result(R))), memberchk(value([M]), R),
		 M = match(MP), memberchk(value(conversation_message_view(V)), MP), memberchk(sequence(Seq), V),
		 context_delete(H, ok(_)), conversation_store_close(S, ok(closed))`,
	} {
		h, _ := host.New(&host.Options{StateDir: state})
		s, err := h.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Once(ctx, goal)
		h.Close()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if i == 1 && got["Seq"] != "1" {
			t.Fatalf("search after reopen: %v", got)
		}
	}
}

// TestPostgresStoreSpec: postgres(DSN, Options) takes the pool and
// timeout options, rejects others as postgres_option, shares one store
// per DSN in a host, and an unreachable server is store_unavailable.
func TestPostgresStoreSpec(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := newSession(t, &host.Options{StateDir: t.TempDir()})
	ctx := context.Background()
	got, err := s.Once(ctx, `D = '`+dsn+`',
		conversation_store_open(postgres(D, [pool_size(2), statement_timeout(5), connect_timeout(2), language(none)]), ok(S1)),
		conversation_store_open(postgres(D), ok(S2)),
		catch(conversation_store_open(postgres(D, [bogus(1)]), _), error(E1, _), true),
		catch(conversation_store_open(postgres(D, [pool_size(0)]), _), error(E2, _), true),
		conversation_store_open(postgres('postgres://postgres@127.0.0.1:1/test', [connect_timeout(1)]), error(conversation_error(P))),
		memberchk(detail(Detail), P), functor(Detail, Name, _)`)
	if err != nil {
		t.Fatal(err)
	}
	if got["S1"] != got["S2"] {
		t.Errorf("one DSN opened twice gave %s and %s, want one shared store", got["S1"], got["S2"])
	}
	if got["E1"] != "domain_error(postgres_option,bogus(1))" || got["E2"] != "type_error(positive_integer,0)" {
		t.Errorf("bad options threw %s and %s", got["E1"], got["E2"])
	}
	if got["Name"] != "store_unavailable" {
		t.Errorf("unreachable server: detail %s, want store_unavailable(Spec)", got["Detail"])
	}
}

// TestConversationWaitAcrossHosts: on each store that processes share, a
// program waiting with conversation_wait/4 in one host (one process's
// runtime) gets the message a program in another host appended.
func TestConversationWaitAcrossHosts(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		state := t.TempDir() // one file, as two processes on a machine share it
		testConversationWaitAcrossHosts(t, state, state, "'sqlite:live.db'")
	})
	t.Run("postgres", func(t *testing.T) {
		testConversationWaitAcrossHosts(t, t.TempDir(), t.TempDir(), "postgres('"+pgtest.DSN(t)+"')")
	})
}

func testConversationWaitAcrossHosts(t *testing.T, stateA, stateB, spec string) {
	a := newSession(t, &host.Options{StateDir: stateA})
	b := newSession(t, &host.Options{StateDir: stateB})
	ctx := context.Background()
	if _, err := a.Once(ctx, `conversation_store_open(`+spec+`, ok(S)), conversation_create(S, [id(live)], ok(_))`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		got map[string]string
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := b.Once(ctx, `conversation_store_open(`+spec+`, ok(S)), conversation_open(S, live, ok(C)),
			conversation_wait(C, 0, [timeout(20)], ok([R])), record_get(R, content, Text)`)
		done <- result{got, err}
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := a.Once(ctx, `conversation_store_open(`+spec+`, ok(S)), conversation_open(S, live, ok(C)),
		conversation_append(C, message(user, "from the other worker"), ok(_))`); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.got["Text"] != `"from the other worker"` {
		t.Errorf("the waiting host got %v, %v", r.got, r.err)
	}
}

// TestPostgresOutageIsStorageFailure: when the server goes away after the
// store opened (through a proxy: connections reset, then refused), opening
// the conversation or appending to it is the outcome conversation_error
// with detail(storage_failure),
// within the connect timeout's retries, and the next append after it
// comes back succeeds.
func TestPostgresOutageIsStorageFailure(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	s := newSession(t, &host.Options{StateDir: t.TempDir()})
	ctx := context.Background()
	open := `conversation_store_open(postgres('` + dsn + `', [connect_timeout(1)]), ok(S)), `
	if _, err := s.Once(ctx, open+`conversation_create(S, [id(c)], ok(_))`); err != nil {
		t.Fatal(err)
	}
	proxy.Down()
	start := time.Now()
	got, err := s.Once(ctx, open+`conversation_open(S, c, O1),
		(   O1 = ok(C) -> conversation_append(C, message(user, "while down"), Out) ; Out = O1 ),
		Out = error(conversation_error(P)), memberchk(detail(D), P), memberchk(phase(Ph), P)`)
	if err != nil || got["D"] != "storage_failure" || (got["Ph"] != "append" && got["Ph"] != "open") {
		t.Fatalf("append while the server is away: %v, %v", got, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the failure took %v with a 1s connect timeout", d)
	}
	t.Logf("while down: detail %s in phase %s after %v", got["D"], got["Ph"], time.Since(start))
	proxy.Up()
	if _, err := s.Once(ctx, open+`conversation_open(S, c, ok(C)), conversation_append(C, message(user, "back"), ok(R)), record_get(R, sequence, 1)`); err != nil {
		t.Errorf("append after the server came back: %v", err)
	}
}

// TestPostgresOpenFailuresAreOutcomes: a server that refuses connections
// and one that accepts them but never answers (a connect timeout) are
// the same outcome at open, store_unavailable, and neither the outcome nor
// its message shows the DSN's password.
func TestPostgresOpenFailuresAreOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*pgtest.Proxy)
	}{
		{"refused", (*pgtest.Proxy).Down},
		{"connect timeout", (*pgtest.Proxy).Freeze},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
			dsn = strings.Replace(dsn, "postgres@", "postgres:SECRETPW@", 1)
			tc.fault(proxy)
			s := newSession(t, &host.Options{StateDir: t.TempDir()})
			got, err := s.Once(context.Background(), `conversation_store_open(postgres('`+dsn+`', [connect_timeout(1)]), O),
				O = error(conversation_error(P)), memberchk(detail(D), P), memberchk(message(M), P)`)
			if err != nil || !strings.HasPrefix(got["D"], "store_unavailable(") {
				t.Fatalf("open: %v, %v; want detail(store_unavailable(_))", got, err)
			}
			if strings.Contains(got["O"], "SECRETPW") {
				t.Errorf("the outcome shows the password: %s", got["O"])
			}
		})
	}
}
