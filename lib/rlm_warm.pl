/** <module> Warm context

Versioned summaries of old ranges of a conversation. They are produced
only when a program asks (conversation_warm_publish/5: a pack or a turn
never derives, publishes or compacts anything), stored as immutable
versions beside the messages they summarize (the artifact store is the
conversation's own store, so they share its transactions and backups), and
offered automatically to every pack and turn whose context options name
that store with warm_store(S). A summary and the raw messages it covers are
never both sent: the pack chooses, per artifact, one of four
representations or none, and the raws compete normally when it chooses
none. Two artifacts whose ranges share a message exclude each other too,
so no message is sent twice; a representation is worth its fidelity
percent of the raws it could replace (the hot tail, sent verbatim anyway,
counts nothing), so with room the raws win and a summary is chosen only
under pressure. An artifact whose source messages changed is stale and
never used; a retired one (conversation_warm_retire/4) is not offered.
The predicates are defined in Go (host/pred_warm.go over host/runtime).

An artifact is

    warm_context([conversation_id(C), created_at(Ms), fields(warm_fields([...])),
                  generation(warm_generation([kind(callback|rlm), usage(U)])),
                  key(range_S_E), producer(conversation_compaction),
                  retired(Bool), source_hash(H), source_range(range(S, E)), source_refs(Refs),
                  source_sequences(Seqs),
                  variants([warm_variant([kind(K), text(T), token_counts(Cs)]), ...]),
                  version(V)])

with Refs upstream's message references,
[conversation_message_ref([conversation_id(C), sequence(N)]), ...] (the
ref of each source message, as conversation_message/3 reports it), and
Seqs their sequence numbers; with the representations verbatim (the range as "[seq] role: content"
lines), detailed_summary, compact_summary (summary and unresolved work) and
facts_only, each counted at publish in every conversation_count_encoding/1.
Errors are error(warm_error([kind(K), message(M), phase(P), ...])) with K
one of missing_required_field, unexpected_field, invalid_field,
invalid_json (with field(F)), generator_failed, generator_exception,
rlm_generation_failed, empty_source_range, no_such_artifact,
unsupported_signal_kind or warm_store_mismatch.

Exports:
    default_warm_policy/1              % -Policy
    warm_context_schema/1              % -Schema
    conversation_warm_derive/4         % +Conversation, +Range, +Options, -Outcome
    conversation_warm_publish/5        % +Conversation, +Store, +Range, +Options, -Outcome
    conversation_warm_list/4           % +Conversation, +Store, +Options, -Outcome
    conversation_warm_context_units/5  % +Conversation, +Store, +Signals, +Options, -Outcome
    conversation_warm_retire/4         % +Conversation, +Store, +Range, -Outcome
    artifact_store_open/2              % +Spec, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API --- */

%!  default_warm_policy(-Policy) is det.
%
%   warm_policy([fidelity([verbatim(95), ...]), max_candidates(32),
%   weights([pinned(100000), ...])]), from warm_fidelity/2,
%   warm_signal_weight/2 and rlm_option(warm_policy/1, ...). A program
%   overlays it per call with warm_options([policy([max_candidates(8),
%   fidelity([compact_summary(80)])])]): keys merge, unnamed ones keep
%   their defaults.
default_warm_policy(warm_policy([fidelity(Fidelity), max_candidates(Max), weights(Weights)])) :-
    rlm_option(warm_policy/1, max_candidates, _, default(Max)),
    findall(F, ( warm_fidelity(K, P), F =.. [K, P] ), Fidelity),
    findall(W, ( warm_signal_weight(K, N), W =.. [K, N] ), Weights).

%!  warm_context_schema(-Schema) is det.
%
%   The fields a generator must produce, exactly: warm_context_schema([
%   summary(text), decisions(list(text)), facts(list(text)),
%   unresolved(list(text)), entities(list(text)), topics(list(text)),
%   files(list(text)), symbols(list(text))]). Missing and unexpected fields
%   are errors naming them (the schema fails closed).
warm_context_schema(warm_context_schema([summary(text), decisions(list(text)), facts(list(text)),
                                         unresolved(list(text)), entities(list(text)), topics(list(text)),
                                         files(list(text)), symbols(list(text))])).

%!  artifact_store_open(+Spec, -Outcome) is det.
%
%   Opens the warm store by name, as upstream's programs do. Artifacts
%   live in the store of the conversation they summarize (published with
%   it, in its transactions and backups): Spec is that store (an open
%   conversation_store(Id), or a conversation_ref, meaning its store), or
%   a spec conversation_store_open/2 takes (memory, persist(Dir),
%   postgres(...)), opened as a store for conversations and their
%   artifacts alike. A warm predicate given another conversation's store
%   is error(warm_error([kind(warm_store_mismatch), ...])).
%
%   ?- conversation_create(S, [], ok(C)), artifact_store_open(C, ok(W)),
%      conversation_warm_publish(C, W, range(1, 2), [], O).

%!  conversation_warm_derive(+Conversation, +Range, +Options, -Outcome) is det.
%
%   Derives the artifact of Range (range(S, E)) without storing it:
%   ok(warm_context(...)) with version(0). Options: generator(G) —
%   call(G, Source, CompletionOptions, Raw) with Source a warm_source([
%   conversation_id, messages, range, refs, text]) record and Raw JSON text
%   or a record of the schema's fields — or generator(rlm) (the default), an
%   rlm_completion/4 over a terms context of the range, whose usage is kept
%   in the artifact; completion_options(L) are passed to it.

%!  conversation_warm_publish(+Conversation, +Store, +Range, +Options, -Outcome) is det.
%
%   Derives as conversation_warm_derive/4 and stores the artifact as the
%   next version of key range_S_E: ok(warm_context(...)). Store is the
%   conversation's store. The source messages are untouched; earlier
%   versions stay readable (conversation_warm_list/4 with history(true)).
%   The result adds overlaps(Keys): the live artifacts whose ranges share a
%   message with this one (a warning: a pack sends at most one of them;
%   retire the one no longer wanted). Not undone on backtracking.
%
%   ?- conversation_warm_publish(C, S, range(25, 50), [generator(G)], ok(W)),
%      record_get(W, overlaps, Keys).
%   Keys = [range_2_40].

%!  conversation_warm_retire(+Conversation, +Store, +Range, -Outcome) is det.
%
%   Stops offering the artifact of Range to packs and turns: stores its
%   next version marked retired(true) and gives it, ok(warm_context(...)).
%   Earlier versions stay readable; retiring a retired artifact writes
%   nothing; publishing the range again makes it live. A range with no
%   artifact is error(warm_error([kind(no_such_artifact), ...])). Not
%   undone on backtracking.

%!  conversation_warm_list(+Conversation, +Store, +Options, -Outcome) is det.
%
%   ok(Artifacts): the latest version of each range, or with history(true)
%   every version, ordered by key then version.

%!  conversation_warm_context_units(+Conversation, +Store, +Signals, +Options, -Outcome) is det.
%
%   The units a pack with warm_store(Store) would be offered:
%   ok(warm_context_units([status(S), units(Us)])), each unit a
%   context_unit record (section warm, one variant per representation,
%   excludes(the raw messages it covers and the keys of the offered
%   artifacts that overlap it)) usable in context_units(Us).
%   Signals are warm_signal(Key, Kind, Strength) terms; Options
%   policy(Overlay) as default_warm_policy/1.
