% Suite for lib/rlm_files.pl and the SWI builtins upstream programs use
% (prolog/swi.go), as a program calls them.
:- set_prolog_flag(double_quotes, chars).

test(tmp_file_is_fresh_and_under_the_state_dir,
     (   tmp_file(scratch, A), tmp_file(scratch, B), A \== B,
         atom_concat(_, Tail, A), sub_atom(Tail, 0, _, _, '/tmp/scratch_'), !
     )).
test(tmp_file_names_a_scratch_store,
     (   tmp_file(store, F),
         conversation_store_open(persist(F), ok(S)),
         conversation_create(S, [], ok(C)), conversation_append(C, message(user, "hi"), ok(_)),
         conversation_store_close(S, ok(closed))
     )).
test(delete_file_outside_grants_is_refused,
     [throws(error(permission_error(delete, source_sink, '/etc/passwd'), delete_file/1))],
     delete_file('/etc/passwd')).
test(delete_file_escape_is_refused,
     [throws(error(permission_error(delete, source_sink, '../x'), delete_file/1))],
     delete_file('../x')).
test(delete_missing_file,
     (   tmp_file(gone, F),
         catch(delete_file(F), error(E, _), true), E == existence_error(file, F)
     )).
test(delete_inside_a_store_is_refused,
     (   conversation_store_open(persist(files_store), ok(S)),
         catch(delete_file('files_store/LOCK'), error(E, _), true),
         conversation_store_close(S, ok(closed)),
         E = permission_error(delete, source_sink, _)
     )).
test(delete_a_directory_is_refused,
     (   tmp_file(x, _),
         catch(delete_file(tmp), error(E, _), true), E == permission_error(delete, directory, tmp)
     )).
test(variant_operator_reads,
     (   X = (f(A, B, A) =@= f(_, _, _)), X = (L =@= _), L = f(_, _, _), \+ call(X),
         f(P, Q) \=@= f(Q, Q), A \== B, P \== Q
     )).
test(atomics_to_string,
     (   atomics_to_string([a, 1, "b"], S), S == "a1b" )).
test(string_bytes_round_trip,
     (   string_bytes("naïve", Bs, utf8), string_bytes(S, Bs, utf8), S == "naïve" )).
test(term_hash_is_stable_for_ground_terms,
     (   term_hash(k(1, "x"), H1), term_hash(k(1, "x"), H2), H1 == H2, integer(H1),
         term_hash(k(_), H3), var(H3)
     )).
