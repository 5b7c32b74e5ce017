% Suite for lib/rlm_conversation_runtime.pl: runtime identity.
:- set_prolog_flag(double_quotes, chars).

test(version_is_atom, [det], (rlm_version(V), atom(V))).
test(ready, rlm_ready).
test(version_matches_host, (rlm_version(V), '$rlm_version'(V))).
test(unknown_predicate_is_existence_error,
     [throws(error(existence_error(procedure, no_such_predicate/0), _))],
     no_such_predicate).
test(catch_does_not_turn_failure_into_success, fails, catch(fail, _, true)).
