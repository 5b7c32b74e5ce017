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
