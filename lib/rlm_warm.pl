/** <module> Warm context

Versioned summaries of old ranges of a conversation. They are produced
only when a program asks (conversation_warm_publish/5: a pack or a turn
never derives, publishes or compacts anything), stored as immutable
versions beside the messages they summarize (the artifact store is the
conversation's own store, so they share its transactions and backups, or a
separate one artifact_store_open/2 opens, as upstream's), and
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
                  ref(artifact_ref([key(K), namespace([conversation, C, warm]), version(V)])),
                  retired(Bool), source_hash(H), source_range(range(S, E)), source_refs(Refs),
                  source_sequences(Seqs),
                  variants([warm_variant([kind(K), text(T), token_counts(Cs)]), ...]),
                  version(V)])

(ref only once stored: upstream's reference to the version) with Refs
upstream's message references,
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
    artifact_store_close/2             % +Store, -Outcome
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
%   Opens the warm store by name, as upstream's programs do. Spec is a
%   conversation's store (an open conversation_store(Id), or a
%   conversation_ref, meaning its store), whose artifacts live with the
%   messages they summarize, in their transactions and backups: ok(Store)
%   names it again. Or Spec is a store spec as conversation_store_open/2
%   takes (memory, persist(Dir), sqlite(File), postgres(...)):
%   ok(artifact_store(Id)), a separate store, upstream's artifact store,
%   which holds the artifacts of any conversation published to it (kept
%   under the conversation's id; their sources are still read from the
%   conversation's store, so a changed source makes them stale as always).
%   A turn's receipt copies the text of warm units from a separate store
%   instead of naming them. Each open takes a reference that
%   artifact_store_close/2 releases. A warm predicate given a conversation
%   store that is not the conversation's own is
%   error(warm_error([kind(warm_store_mismatch), ...])).
%
%   ?- conversation_create(S, [], ok(C)), artifact_store_open(memory, ok(A)),
%      conversation_warm_publish(C, A, range(1, 2), [], O).

%!  artifact_store_close(+Store, -Outcome) is det.
%
%   Releases the reference artifact_store_open/2 took: ok(closed). The
%   last reference closes the store (a memory store's artifacts are then
%   gone); a conversation's store stays open while its own
%   conversation_store_open/2 reference does. A store closed already is
%   error(conversation_error([detail(closed_store), ...])).

%!  conversation_warm_derive(+Conversation, +Range, +Options, -Outcome) is det.
%
%   Derives the artifact of Range (range(S, E)) without storing it:
%   ok(warm_context(...)) with version(0). Options: generator(G) —
%   call(G, Source, CompletionOptions, Raw) with Source a warm_source([
%   conversation_id, messages, range, refs, text]) record and Raw JSON text
%   or a record of the schema's fields — or generator(rlm) (the default), an
%   rlm_completion/4 over a terms context of the range, whose usage is kept
%   in the artifact; completion_options(L) are passed to it;
%   token_options(L) as conversation_warm_publish/5 reads it.

%!  conversation_warm_publish(+Conversation, +Store, +Range, +Options, -Outcome) is det.
%
%   Derives as conversation_warm_derive/4 and stores the artifact as the
%   next version of key range_S_E: ok(warm_context(...)). Store is the
%   conversation's store or one artifact_store_open/2 opened. The source
%   messages are untouched; earlier versions stay readable
%   (conversation_warm_list/4 with history(true)). The result adds
%   upstream's warm_publication fields, artifact(rlm_artifact([key,
%   kind(warm_context), namespace, ref, version])) and warm(W), the artifact
%   itself, and, when some live artifact's range shares a message with
%   this one, overlaps(Keys) (a warning: a pack sends at most one of them;
%   retire the one no longer wanted). Options are derive's and
%   token_options(L) as token_count_text/3 takes them: the encoding a
%   model(M) or encoding(E) names is counted too (token_counter(C) is
%   accepted; a pack counting with C counts what it offers with C). Not
%   undone on backtracking.
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
%   ok(Units), upstream's list, each unit a context_unit record (section
%   warm, one variant per representation, excludes(the raw messages it
%   covers and the keys of the offered artifacts that overlap it)) usable
%   in context_units(Units); what was available, stale and loaded is the
%   pack's warm_context_status.
%   Signals are warm_signal(Key, Kind, Strength) terms; Options
%   policy(Overlay) as default_warm_policy/1.
