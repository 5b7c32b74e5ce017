/** <module> Top-level helpers written in Prolog (toplevel.go has the rest)
*/

%!  time(:Goal) is semidet.
%
%   Runs Goal once and reports on user_error, as SWI-Prolog does, the
%   CPU time of the process and the wall time it took, also when Goal
%   fails or throws. ichiban counts no inferences, so none are reported
%   (SWI's line starts "% N inferences,"), and Goal runs once (SWI's
%   time/1 is as nondeterministic as Goal).
time(Goal) :-
    time_start_(T0),
    (   catch(Goal, E, (time_report_(T0), throw(E)))
    ->  time_report_(T0)
    ;   time_report_(T0),
        fail
    ).

%!  trace(+Spec) is det.
%
%   Puts a trace point on the static predicates Spec (Name or
%   Name/Arity) names, as SWI-Prolog's trace/1 does: each call, exit,
%   redo, failure and exception of theirs is reported on user_error
%   (" T Call: app([1], [2], _123)"). notrace/1 takes it off, notrace/0
%   takes off all. A traced predicate always leaves a choice point (its
%   Redo port), so the top level asks for ; after it.

%!  notrace(+Spec) is det.
%
%   Takes the trace point of trace/1 off Spec.

trace_exit_(Goal) :-
    trace_port_(exit, Goal).
trace_exit_(Goal) :-
    trace_port_(redo, Goal),
    fail.
