/** <module> Context adapters written in Prolog

A program exposes its own data — a knowledge base of facts, files it reads
through the paths it was granted, rows of a database it queries — as an
opaque context handle, with the bounded operations of built-in handles:
peek, slice, search, partition, map and reduce, each under max_results,
max_bytes and time_limit, the metadata size cap at registration
(rejected, never truncated) and honest truncation (the registry re-bounds
whatever a callback returns and ORs its own truncation into the adapter's
flag). Plans reach such a handle like any other (rlm_completion/4,
plan_run/5, the cold history of a turn).

The callbacks run in the session's interpreter, under the lock of the
Prolog call that reached the handle (a context_* predicate, a plan step,
a completion), with the session's rules: files only under the script's
directory and granted paths, no network, no shell. An adapter declares
what it needs; context_backend/2 reports it and nothing more.

Callbacks:

  - MetadataHandler: call(H, Source, Metadata), Metadata a ground
    record or property list; kind(K), items(N) and bytes(N) (integers;
    absent means unknown) are read, every field is the model-visible
    source descriptor. Failure or an exception is
    error(context_error([kind(adapter_metadata_failed), ...])); a reply
    that is not ground is invalid_adapter_metadata.
  - OperationHandler: call(H, Operation, Source, limits([max_bytes(B),
    max_results(R), time_limit(T)]), Work), Operation one of
    peek(head(N)), peek(tail(N)), peek(item(I)), slice(Start, Length),
    search(Pattern), partition(fixed(N)), partition(lines(N)), map(T),
    reduce(R); peek(metadata) is answered by the registry. Work is a
    ground record or property list of value(V) (text, an integer, or a
    list whose elements are kept as terms), bytes_inspected(N),
    items_inspected(N) and truncated(Bool). Failure or an exception is
    adapter_operation_failed; a bad Work is invalid_adapter_work; an
    undeclared operation capability_denied, without calling back.

Exports:
    context_adapter_register/5   % +Name, +Capabilities, +MetadataHandler, +OperationHandler, -Outcome
    context_adapter_unregister/2 % +Name, -Outcome
    context_adapter_info/2       % +Name, -Outcome
    context_register_adapter/4   % +Name, +Source, +Options, -Outcome
    context_backend/2            % +Backend, -Info
*/

%!  context_adapter_register(+Name, +Capabilities, +MetadataHandler, +OperationHandler, -Outcome) is det.
%
%   Upstream's order. Capabilities is a record or property list:
%   operations(L) (non-empty, a subset of peek, slice, search, partition,
%   map, reduce), and the declarations filesystem(Bool), network(Bool),
%   persistent(Bool) (default false). Outcome is ok(registered(Name)),
%   ok(existing(Name)) for the same definition again, or
%   error(context_error([kind(K), ...])) with K adapter_conflict (another
%   definition has the name) or invalid_adapter.
%
%   The issue's order is accepted too:
%   context_adapter_register(+Name, +Meta/Op, +Capabilities, +Options,
%   -Outcome), where Meta/Op are the two handlers, or
%   Module/[metadata(Meta), operation(Op)]; Options may hold
%   description(Text), shown by context_adapter_info/2.
%
%   ?- context_adapter_register(kb, [operations([search])], kb_meta, kb_op, O).

%!  context_adapter_unregister(+Name, -Outcome) is det.
%
%   ok(unregistered(Name)), or error(context_error([kind(K), ...])) with
%   K adapter_in_use (live handles use it) or adapter_not_registered
%   (upstream reported success for a name it never had).

%!  context_adapter_info(+Name, -Outcome) is det.
%
%   ok(context_adapter([capabilities(C), name(Name)])) (plus
%   description(D) when registered with one), or adapter_not_registered.

%!  context_register_adapter(+Name, +Source, +Options, -Outcome) is det.
%
%   Creates a handle on Source (a ground term the callbacks understand)
%   through the adapter. Options are context_register/3's limits;
%   max_bytes also caps the whole metadata descriptor:
%   adapter_metadata_too_large (with bytes and max_bytes) and no handle
%   when it does not fit. Outcome is ok(context_ref([handle(H),
%   metadata(M)])), M's backend the term adapter(Name). A non-ground Source
%   is invalid_adapter_source.

%!  context_backend(+Backend, -Info) is semidet.
%
%   Info is capabilities([filesystem(B), network(B), operations(L),
%   persistent(B)]) (and source_kinds([text, terms]) for memory) of
%   Backend: memory, adapter(Name), or a live handle (its backend). Fails
%   for an adapter or handle that does not exist. The conversation adapter
%   is persistent, with no filesystem or network; a Prolog adapter reports
%   what it declared.
