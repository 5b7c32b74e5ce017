// Package prolog is rlmpl's generic embedding of github.com/ichiban/prolog,
// and the only package that imports ichiban's root package. It knows nothing
// of conversations, storage or providers.
//
// It owns:
//   - building interpreters with rlmpl's flags, chosen once here:
//     double_quotes=chars (text is a chars list; text arguments accept
//     atoms, chars and codes alike) and unknown=error;
//   - safe edges: halt/0,1 ends the running query with a [*HaltError] (never
//     os.Exit, and catch/3 cannot swallow it); open/3,4 reads only
//     [Options.FS] and never writes; consult/1 uses the host's reader;
//   - the host's reader: syntax errors carry file:line:column
//     ([*SyntaxError]; ichiban reports none), non-ASCII runes inside
//     quoted atoms are escaped as \xHEX\ so ordinary typography (dashes,
//     curly quotes, emoji) loads — ichiban's lexer rejects it — and SWI's
//     \uXXXX escapes read; [NextClause] splits text at a clause's end;
//   - member/2 and append/3 in Go (fast.go): member/2 leaves no choice
//     point at the last element of a proper list, as in SWI-Prolog;
//   - typed foreign predicates ([Pred0] … [Pred8], arity checked at compile
//     time) installed by [Interpreter.Install], which panics on a duplicate;
//     a panic in a predicate becomes error(system_error, _), a Go error is
//     mapped through [Options.MapError];
//   - term ↔ Go conversion ([ToTerm], [Value], [Record], the argument
//     readers on [Call]) and ISO error constructors ([TypeError], …);
//   - queries under a context with a watchdog: a cancelled query returns
//     even when the engine is stuck in a Go builtin ([ErrAbandoned]); the
//     engine reports after each solution whether a choice point remains, so
//     [Query.Last] knows, and [Query.Answer] renders a solution as
//     SWI-Prolog's top level does (solve.go, answer.go);
//   - writing text as text (see Text below), and record terms read with
//     record_get/3, the get_dict/3 of Tag([key(Value), ...]);
//   - the compatibility prelude: SWI-Prolog predicates ichiban lacks (lists,
//     strings, format, assoc, pairs, ordsets, random, time, messages,
//     setup_call_cleanup/3), and help/1, apropos/1, listing/1 and
//     portray_clause/1 for the top level.
//
// # Text
//
// There is no string type: text is a chars list (double_quotes=chars), so
// "hello" and [h,e,l,l,o] are the same term and every list predicate works
// on text. What differs is how text is written. A chars list that carries
// text — one that ends in a Go-backed chars list (engine.CharList), which
// is what "..." literals, atom_chars/2, the string and format predicates
// and the host's foreign predicates produce, and what append/3 onto them
// keeps — is written as text: "hello" by the quoted writers (writeq/1,
// print/1, write_term/2,3 with quoted(true), format's ~p and ~q, messages,
// [Interpreter.WriteQ] and the top level), which reads back as the same
// list, and hello by the unquoted ones (write/1, ~w, [Interpreter.Write]),
// as SWI-Prolog writes a string; write_canonical/1 and ~k keep the list.
// A list built cell by cell ([a,b], msort/2, findall/3) is written as a
// list even when its elements are characters: portray_text-style guessing
// would print [a,b] or the result of msort([b,a], L) as "ab", which is
// wrong far more often in list code than a text built that way is
// unreadable. The empty text is [] and is written so. Quoted output falls
// back to lists while a program sets double_quotes to codes or atom, so it
// always reads back. See write.go.
//
// # Concurrency
//
// An [Interpreter] is not safe for concurrent use. ichiban's VM mutates
// unsynchronised maps, and a concurrent mutation kills the process (it is a
// fatal error, not a panic). One goroutine owns an Interpreter; several
// Interpreters run in parallel safely. Only one [Query] may be open at a
// time, and it must be closed.
//
// # Usage
//
//	in := prolog.New(&prolog.Options{Stdout: os.Stdout})
//	in.Install(prolog.Pred2("double", "double(+N, -M) is det",
//		func(c *prolog.Call, n, m engine.Term) (bool, error) {
//			v, err := c.Int(n) // instantiation or type error, ISO order
//			if err != nil {
//				return false, err
//			}
//			return c.Unify(m, engine.Integer(2*v)), nil
//		}))
//	if err := in.Consult(ctx, "app.pl", "twice(X, Y) :- double(X, Y).\n"); err != nil {
//		log.Fatal(err) // app.pl:LINE:COL: syntax error: ...
//	}
//	q, err := in.Query(ctx, "twice(21, Y)")
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer q.Close()
//	for q.Next() {
//		for _, b := range q.Bindings() {
//			fmt.Println(b.Name, "=", in.WriteQ(b.Value, nil)) // Y = 42
//		}
//	}
//	if err := q.Err(); err != nil {
//		log.Fatal(err)
//	}
package prolog
