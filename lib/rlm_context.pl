/** <module> Opaque context handles

A context is a large value — a text, a list of terms, a conversation behind
a trusted adapter — that a planner inspects through bounded operations
instead of reading it whole. Handles are context_handle(Id, Version).

Every operation takes Options with the limits max_results(N) (default 32),
max_bytes(N) (default 16384, one budget for the whole returned value: UTF-8
bytes of text, of each term's writeq form) and time_limit(Seconds) (default
0.25), checked against rlm_option/4 before any work: a bad value throws
type_error(positive_integer, V) (or positive_number), an unknown option
domain_error(Pred_option, Opt), and a handle that is not
context_handle(Id, Version) type_error(context_handle, H). The predicates
are defined in Go (host/pred_context.go). Results are

    ok(context_result([handle(H), operation(Op), trace(T), truncated(Bool), value(V)]))

with T the operation's trace event, as context_trace/3 lists it (its
sequence, bytes_inspected, items_inspected, ...), and where truncated(true) means the limits left out something the request asked
for — never merely that the request was partial. Errors are
error(context_error([kind(Kind), message(Text), operation(Op), ...])).

Exports:
    context_register/3           % +Source, +Options, -Outcome
    context_metadata/2           % +Handle, -Outcome
    context_peek/4               % +Handle, +Selector, +Options, -Outcome
    context_slice/5              % +Handle, +Start, +Length, +Options, -Outcome
    context_search/4             % +Handle, +Pattern, +Options, -Outcome
    context_partition/4          % +Handle, +Spec, +Options, -Outcome
    context_map/4                % +Handle, +Transform, +Options, -Outcome
    context_reduce/4             % +Handle, +Reducer, +Options, -Outcome
    context_delete/2             % +Handle, -Outcome
    context_trace/3              % +Handle, +Limit, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API (defined in Go) --- */

%!  context_register(+Source, +Options, -Outcome) is det.
%
%   Registers text(Text) or terms(List) and returns
%   ok(context_ref([handle(H), metadata(M)])). Any other source, including
%   file(_) and adapter(_,_), is error(context_error([kind(unsupported_source),
%   ...])): ordinary registration can never reach files or install adapters.
%
%   ?- context_register(text("a\nb"), [], ok(R)).

%!  context_metadata(+Handle, -Outcome) is det.
%
%   Outcome is ok(context_ref([handle(H), metadata(M)])): backend, kind,
%   bytes, items, version, created_at and operations — never the payload.

%!  context_peek(+Handle, +Selector, +Options, -Outcome) is det.
%
%   Selector is metadata, head(N) or tail(N) (characters of a text, items
%   of a list) or item(I) (0-based, term contexts; out of range is
%   kind(out_of_range)).

%!  context_slice(+Handle, +Start, +Length, +Options, -Outcome) is det.
%
%   Characters (text) or items (terms) [Start, Start+Length). A Start past
%   the end is kind(out_of_range).

%!  context_search(+Handle, +Pattern, +Options, -Outcome) is det.
%
%   Lines (text) or items (terms) containing Pattern, as
%   match([index(I), value(V)]). Case-insensitive unless
%   case_sensitive(true). The result carries next(N): when truncated, the
%   cursor(N) option continues from the first match left out.

%!  context_partition(+Handle, +Spec, +Options, -Outcome) is det.
%
%   Spec is fixed(N) (N characters or items per part) or lines(N) (text
%   only). Parts are partition([index(I), length(L), start(S), value(V)]).

%!  context_map(+Handle, +Transform, +Options, -Outcome) is det.
%
%   Applies identity, lowercase, uppercase or length to each line or item.
%   Anything else (a callable above all) is kind(capability_denied).

%!  context_reduce(+Handle, +Reducer, +Options, -Outcome) is det.
%
%   Reducer is count (lines or items) or byte_count; anything else is
%   kind(capability_denied).

%!  context_delete(+Handle, -Outcome) is det.
%
%   Deletes the handle: ok(deleted([handle(H)])). Later use is
%   kind(stale_handle) while the (bounded) tombstone lasts.

%!  context_trace(+Handle, +Limit, -Outcome) is det.
%
%   The handle's last Limit operations, oldest first, as context_trace
%   records (bytes and items inspected, bytes returned, truncated,
%   elapsed_ms, sequence). Traces are a bounded ring per handle.
