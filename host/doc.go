// Package host is the Prolog side of the rlmpl runtime: a [Host] that owns
// what sessions share — the typed Go API of host/runtime (stores,
// conversations, packs), the tokenizer registry, providers — and
// [Session]s, one interpreter each, loaded with lib/ and every
// foreign-predicate family from the one registration table
// (predicates.go). The families are thin adapters: decode terms, call
// host/runtime (or host/plan, host/handle), encode one outcome. What they
// share has a file of its own: calls into Prolog (call.go, callbacks.go),
// store values as terms (codec.go), completion calls decoded
// (completion_decode.go), options (options.go), lib's policy and the
// options every pack starts from (policy.go), outcomes (errors.go). Terms
// meet host/plan's values in one place, host/planterm. lib/ holds the
// policy as data (lib/rlm_policy.pl) that sessions read once.
//
// # Errors: one rule
//
// An unbound argument, an argument of the wrong type and a bad option throw
// ISO errors naming the public predicate (options are checked by one
// checker against lib's rlm_option/4 schemas, with must_be/2's errors).
// What depends on state or data — a missing conversation, a stale handle,
// an invalid message, a pack over the ceiling, a provider failure — is an
// error(Reason) outcome, built by the one table in errors.go
// (Session.reason). Nothing internal reaches a program: a Go error the
// table does not know is an internal_error outcome or, in a phase that
// touches storage (each phase says whether it does), a conversation_error
// with detail(storage_failure).
//
// # Concurrency
//
// A Host is safe for concurrent use. A Session is not: one goroutine owns
// it for its whole life (ichiban mutates shared maps without locks and a
// race kills the process). Several Sessions run in parallel; creating one
// costs about a millisecond, so per-request sessions are fine.
//
// # Errors in Go
//
// An uncaught Prolog exception reaches Go as a *[PrologError] that unwraps
// to the sentinel of errors.go's ISO table, if any; a det goal that fails
// is [ErrNoSolution].
//
// # Usage
//
//	h, err := host.New(&host.Options{Stdout: os.Stdout, QueryTimeout: time.Minute})
//	if err != nil {
//		log.Fatal(err)
//	}
//	s, err := h.NewSession(ctx)
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer s.Close()
//	if err := s.Consult(ctx, "agent.pl", program); err != nil {
//		log.Fatal(err)
//	}
//	b, err := s.Once(ctx, "rlm_version(V)")
//	fmt.Println(b["V"], err)
//
// # Finding your room
//
//	I want to…                                 Go to                                  Then update
//	change what a conversation turn does       host/runtime (Go API), lib/ (policy)   host/runtime tests, testdata/lib/*_test.pl
//	change a default, an option or the value   lib/rlm_policy.pl (data)               testdata/lib/policy_test.pl
//	  model, the boundary text
//	add or alter a Go-backed predicate         host/pred_<family>.go, predicates.go   testdata/lib/<family>_test.pl, its %! line in lib/
//	add a storage operation                    store/, then host/runtime              store tests, runtime tests
//	use warm summaries in packs and turns      host/runtime (load, units), host/pack  runtime tests, testdata/lib
//	put conversations on another backend       store/kv.go (the ordered-KV seam)      store tests against both
//	add a tokenizer encoding                   tokenizer/                             tokenizer tests
//	change solving or encoding of constraints  solver/                                solver tests, FuzzSolve
//	convert a new Go type to or from terms     prolog/convert.go, host/terms.go       FuzzTermRoundTrip seeds
//	map a new error across the boundary        host/errors.go (the single table)      a throws(...) or error(...) suite case
//	add a CLI subcommand                       cmd/rlmpl/<cmd>.go, main.go, doc.go    testdata/cli/<cmd>.txt
package host
