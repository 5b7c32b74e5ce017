% Suite for lib/rlm_files.pl and the SWI builtins upstream programs use
% (prolog/swi.go), as a program calls them. Written as a plunit unit: the
% suite runner (host/lib_test.go) runs each test through run_tests/1.
:- set_prolog_flag(double_quotes, chars).

:- begin_tests(files).

test(tmp_file_is_fresh_and_under_the_state_dir) :-
    tmp_file(scratch, A), tmp_file(scratch, B), A \== B,
    once(( atom_concat(_, Tail, A), sub_atom(Tail, 0, _, _, '/tmp/scratch_') )).

test(tmp_file_names_a_scratch_store) :-
    tmp_file(store, F),
    conversation_store_open(persist(F), ok(S)),
    conversation_create(S, [], ok(C)), conversation_append(C, message(user, "hi"), ok(_)),
    conversation_store_close(S, ok(closed)).

test(delete_file_outside_grants_is_refused,
     [error(permission_error(delete, source_sink, '/etc/passwd'))]) :-
    delete_file('/etc/passwd').

test(delete_file_escape_is_refused, [error(permission_error(delete, source_sink, '../x'))]) :-
    delete_file('../x').

test(delete_missing_file, [error(existence_error(file, F))]) :-
    tmp_file(gone, F),
    delete_file(F).

test(delete_inside_a_store_is_refused, [true(E = permission_error(delete, source_sink, _))]) :-
    conversation_store_open(persist(files_store), ok(S)),
    catch(delete_file('files_store/LOCK'), error(E, _), true),
    conversation_store_close(S, ok(closed)).

test(delete_an_sqlite_store_file_is_refused) :-
    conversation_store_open('sqlite:files_store.db', ok(S)),
    forall(member(F, ['files_store.db', 'files_store.db-wal', 'files_store.db-lock']),
           catch((delete_file(F), fail), error(permission_error(delete, source_sink, F), _), true)),
    conversation_store_open('sqlite:files_store.db', ok(S)),
    conversation_store_close(S, ok(closed)), conversation_store_close(S, ok(closed)).

test(delete_a_directory_is_refused, [error(permission_error(delete, directory, tmp))]) :-
    tmp_file(x, _),
    delete_file(tmp).

test(variant_operator_reads) :-
    X = (f(A, B, A) =@= f(_, _, _)), X = (L =@= _), L = f(_, _, _), \+ call(X),
    f(P, Q) \=@= f(Q, Q), A \== B, P \== Q.

test(atomics_to_string, [true(S == "a1b")]) :-
    atomics_to_string([a, 1, "b"], S).

test(string_bytes_round_trip, [true(S == "naïve")]) :-
    string_bytes("naïve", Bs, utf8), string_bytes(S, Bs, utf8).

test(term_hash_is_stable_for_ground_terms) :-
    term_hash(k(1, "x"), H1), term_hash(k(1, "x"), H2), H1 == H2, integer(H1),
    term_hash(k(_), H3), var(H3).

:- end_tests(files).
