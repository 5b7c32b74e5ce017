// Package host is the rlmpl runtime: a [Host] that owns what sessions share,
// and [Session]s — one interpreter each, loaded with lib/ and every
// foreign-predicate family from the one registration table
// (predicates.go). It does the mechanism; lib/ holds the policy.
//
// # Concurrency
//
// A Host is safe for concurrent use. A Session is not: one goroutine owns
// it for its whole life (ichiban mutates shared maps without locks and a
// race kills the process). Several Sessions run in parallel; creating one
// costs about a millisecond, so per-request sessions are fine.
//
// # Errors
//
// host/errors.go is the single two-way table between Go sentinels and ISO
// error formals. An uncaught Prolog exception reaches Go as a
// *[PrologError] that unwraps to the table's sentinel; a det goal that
// fails is [ErrNoSolution].
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
//	change what a conversation turn does       lib/rlm_conversation_runtime.pl        testdata/lib/*_test.pl
//	add or alter a Go-backed predicate         host/pred_<family>.go, predicates.go   testdata/lib/<family>_test.pl, lib pldoc
//	add a tokenizer encoding                   tokenizer/                             tokenizer tests
//	change solving or encoding of constraints  solver/                                solver tests, FuzzSolve
//	convert a new Go type to or from terms     prolog/convert.go                      FuzzTermRoundTrip seeds
//	map a new error across the boundary        host/errors.go (the single table)      a throws(...) suite case
//	add a CLI subcommand                       cmd/rlmpl/<cmd>.go, main.go, doc.go    testdata/cli/<cmd>.txt
package host
