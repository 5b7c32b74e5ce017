package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host"
)

// TestPersistentConversationSurvivesReopen: the upstream persistence
// scenario, on a real badger directory, across hosts (as across runs).
func TestPersistentConversationSurvivesReopen(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	spec := "persist(store)"
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
	state := t.TempDir()
	spec := "persist(store)"
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
