/** <module> Durable conversations

The full transcript is stored durably (badger, synced writes) and never
rewritten: messages get dense sequences from 1, appends are O(1) and
idempotent under a key, and a retried append returns the original record.
The predicates are defined in Go (host/pred_conversation.go over
host/runtime); this file is their documentation. Options are checked
against rlm_option/4 (lib/rlm_policy.pl).

Records:

    conversation_store(Id)
    conversation_ref([created_at(Ms), id(Id), metadata(metadata([...])), store(S)])
    conversation_message([content(C), conversation_id(Id), created_at(Ms),
                          message(message([content(C), role(R), ...])),
                          ref(conversation_message_ref([conversation_id(Id), sequence(N)])),
                          role(R), sequence(N), token_counts(token_counts([...]))])
    (plus metadata(metadata([...])), session(S) and time(Ms) when the
    append said them)

Times are milliseconds since the epoch (created_at, time); options that
take a time also accept RFC 3339 text ("2023-05-08T13:56:00Z") or a date
("2023-05-08").

A message is message(Role, Content) or message([role(R), content(C),
name(N), tool_call_id(Id), tool_calls([tool_call([id(I), name(F),
arguments(JSON)])]), reasoning(T)]); content is text or a list of parts
text(T), image_url(URL), image_url(URL, auto|low|high) or
image_url(URL, Detail, Alt) with the image's caption (searched). An image
URL is http, https or data: (anything else, javascript: say, is
detail(invalid_message('content[I].image_url.url')) and nothing is
stored).

Errors follow the runtime's one rule: an unbound argument, an argument of
the wrong type (a store, conversation, selector or message of the wrong
shape) and a bad option throw ISO errors naming the predicate; what
depends on the store or on the data is an outcome
error(conversation_error([detail(D), kind(conversation_error),
message(Text), phase(P)])) with D one of not_found(Id),
conversation_exists(Id), closed_store, store_locked,
store_path_not_granted(Spec), store_unavailable(Spec),
idempotency_key_reused, invalid_message(Field), orphan_tool_result,
invalid_range(Selector),
message_not_found(Id, Seq), unpinnable_message(Id, From, To) or
storage_failure (also a write refused because the disk holding the store
is nearly full: the store stays readable, nothing acknowledged is lost,
and writes succeed again once space is freed; the message says how much
is free and needed; and a PostgreSQL store whose server is down or
restarting, once the store's safe retries ran out after its connect
timeout: the call did nothing, or, for a write whose commit was cut off,
its idempotency key makes the retry safe).

Exports:
    conversation_store_open/2    % +Spec, -Outcome
    conversation_store_close/2   % +Store, -Outcome
    conversation_create/3        % +Store, +Options, -Outcome
    conversation_open/3          % +Store, +Id, -Outcome
    conversation_list/3          % +Store, +Options, -Outcome
    conversation_append/3        % +Conversation, +Message, -Outcome
    conversation_append/4        % +Conversation, +Message, +Options, -Outcome
    conversation_append_all/4    % +Conversation, +Items, +Options, -Outcome
    conversation_message/3       % +Conversation, +Seq, -Outcome
    conversation_messages/4      % +Conversation, +Selector, +Options, -Outcome
    conversation_search/4        % +Conversation, +Query, +Options, -Outcome
    conversation_cold_context/3  % +Conversation, +LimitOptions, -Outcome
    conversation_stats/2         % +Conversation, -Outcome
    conversation_wait/4          % +Conversation, +AfterSeq, +Options, -Outcome
    conversation_export/3        % +Conversation, +Format, -Outcome
    conversation_import/3        % +Conversation, +File, -Outcome
    conversation_pin/3           % +Conversation, +Target, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API (defined in Go) --- */

%!  conversation_store_open(+Spec, -Outcome) is det.
%
%   Spec is memory, persist(Dir) or persist(Dir, [language(en|none)]): the
%   search index's analyzer, English (stemming, possessives, stop words;
%   the default) or none (a store opened with another language than its
%   index's rebuilds the index). A relative Dir names a directory under
%   the state directory (rlmpl --state DIR; default $XDG_STATE_HOME/rlmpl)
%   and is one plain path segment (no /, not . or ..); an absolute Dir
%   must be under the state directory or granted (rlmpl --grant DIR).
%   Symbolic links are resolved first, so a link cannot lead a store out.
%   Outcome is ok(conversation_store(Id)); writes are synced. A directory
%   another process holds is detail(store_locked); opening the same
%   directory twice in one host shares the store; one outside the state
%   directory is detail(store_path_not_granted(Spec)); a Dir that may not
%   hold a store is detail(store_path_refused(Spec)): a name of several
%   segments, the state directory itself, a directory inside another
%   store (its kv or index), a link to nowhere, or a directory that holds
%   other files.
%
%   Spec is also a store spec as the CLI's --store takes it, as text:
%   'sqlite:agent.db', 'postgres://user@host/db', 'badger:notes', memory
%   (a bare name is persist(Name)); or Scheme(Target) and Scheme(Target,
%   Options) for any scheme: sqlite(File), badger(Dir), postgres(DSN). An
%   unknown scheme or a spec that names nothing throws
%   domain_error(conversation_store_spec, Spec) (a DSN's password
%   redacted).
%
%   Spec sqlite(File) or 'sqlite:File' opens a store in an SQLite file
%   that every process of the machine may open at once, with no server:
%   File follows Dir's rule (under the state directory or granted); the
%   options are language(en|none) as above, fixed by the first process to
%   open the file (another is refused). Appends from any process get dense
%   sequences, turns on one conversation take turns across processes, and
%   conversation_wait/4 sees other processes' appends.
%
%   Spec postgres(DSN) or postgres(DSN, Options) opens a store in a
%   PostgreSQL database (DSN a postgres:// URL or a libpq connection
%   string; search_path selects the schema), shared by every process that
%   opens it: appends from any of them get dense sequences. Options:
%   language(en|none) as above, pool_size(N) (default 4),
%   statement_timeout(Seconds) (default 30), connect_timeout(Seconds)
%   (default 10). Its schema is migrated on open; an unreachable server,
%   or a schema migrated by a newer rlmpl, is detail(store_unavailable(Spec)).

%!  conversation_store_close(+Store, -Outcome) is det.
%
%   ok(closed). A memory store's data is gone once its last user closes it.

%!  conversation_create(+Store, +Options, -Outcome) is det.
%
%   Options: id(Id) (default a fresh id), metadata([key(V), ...]) with
%   JSON-like values. A taken id is detail(conversation_exists(Id)).

%!  conversation_open(+Store, +Id, -Outcome) is det.
%
%   ok(conversation_ref(...)) or detail(not_found(Id)).

%!  conversation_list(+Store, +Options, -Outcome) is det.
%
%   Options: order(asc|desc) by creation (default desc), limit(N|all).
%   Costs O(result), not O(conversations).

%!  conversation_append(+Conversation, +Message, -Outcome) is det.
%
%   Appends Message durably: ok(conversation_message(...)), with its
%   content counted in every conversation_count_encoding/1. Message is
%   message(Role, Content), e.g. message(user, "the port is 8443"), or
%   message([role(R), content(C), name(N), tool_call_id(Id),
%   tool_calls(Calls), reasoning(T)]) with only role required (docs/conversations.md
%   has tool calls and image parts). Messages
%   follow the options rule: a field of the wrong type (content that is
%   not text, such as 42) throws type_error(text, V), an unknown field
%   domain_error(message_field, F); a value the store refuses (an unknown
%   role, a bad part) is detail(invalid_message(Field)). Either way nothing
%   is written. A tool message must answer a tool call of the 128 messages
%   before it (a provider rejects one that does not, and it would be
%   carried by every later turn): else detail(orphan_tool_result) and
%   nothing is written. The same holds for conversation_turn/4. Not undone
%   on backtracking.

%!  conversation_append(+Conversation, +Message, +Options, -Outcome) is det.
%
%   As conversation_append/3; idempotency_key(K) makes a retry return the
%   original record and write nothing (the same key with other content is
%   detail(idempotency_key_reused)). time(T) says when the message was said
%   (an imported transcript, a relayed message; default: when appended),
%   session(S) which session it belongs to, metadata([key(V), ...]) what
%   else is known (stored, not searched). Search filters and ranks by them.

%!  conversation_append_all(+Conversation, +Items, +Options, -Outcome) is det.
%
%   Appends a list of messages in order, in one transaction and one sync:
%   all are durable when it answers, or none is written (for programs that
%   log tool traffic or relay a transcript: 10-40x faster per message than
%   a loop of conversation_append/4). Each item is a message, or
%   Message-ItemOptions with conversation_append/4's options for that
%   message (idempotency_key(K), time(T), session(S), metadata(M)).
%   Outcome is ok(Records), one record per item: an item whose key was
%   written before (by an earlier call or an earlier item) gets that
%   record and writes nothing, so a retried batch writes nothing twice.
%   Everything is validated first, with the errors of
%   conversation_append/4; a tool message may answer a call earlier in
%   the batch. At most 10,000 items (detail(invalid_message(entries)));
%   Options takes none yet.

%!  conversation_message(+Conversation, +Seq, -Outcome) is det.
%
%   The record at sequence Seq (a positive integer), or
%   detail(message_not_found(Id, Seq)).

%!  conversation_messages(+Conversation, +Selector, +Options, -Outcome) is det.
%
%   Selector: all, recent(N), range(S, E), before(S), after(S),
%   around(S, R) or role(R) (anything else is a domain error);
%   limit(N|all) keeps the first N. Records come in sequence order; the
%   cost is O(result).

%!  conversation_search(+Conversation, +Query, +Options, -Outcome) is det.
%
%   Messages that match Query, best first: BM25 over message text, image
%   captions, tool call names and arguments, stemmed (persist(Dir,
%   [language(none)]) turns that off), with the same scores whether a
%   message is indexed yet or not; a query naming a message's author or
%   its month ("May 2023") ranks it higher. A hit's context counts: it lifts
%   the matching messages next to it in its session (the answer to a
%   matching question), and a session whose messages match together lifts
%   them; the best two hits keep their ranks. Options: max_results(N)
%   (default 32), offset(N) for paging, roles([user, ...]), session(S),
%   since(T) and until(T) (a time range), context(false) to rank each
%   message by its own score alone, window(K) (0..50) for the K messages on
%   each side of each hit in its session, max_bytes(N) to bound the
%   windows' text, exact(true) for substring matching and
%   case_sensitive(Bool) (substring mode). A word in most messages is left
%   out of ranking (a query of only such words finds nothing). Ranked
%   search reads the first MiB of a message's text (and of its captions
%   and tool calls): words after it are not found, and a hit whose message
%   is longer carries partial(true); exact(true) reads everything. Records
%   carry score(S) (their own), lift(L) (what context added) and, with a
%   window, window([Record, ...]) in sequence order.

%!  conversation_cold_context(+Conversation, +LimitOptions, -Outcome) is det.
%
%   An opaque handle on the conversation's history for plans:
%   ok(context_ref([handle(H), metadata(M)])) with M naming the
%   conversation, message count, revision and backend — no payload. The
%   handle answers peek(head(N)|tail(N)|item(I)), slice(Start, Length) over
%   0-based sequence indexes and search(Query) (ranked; exact(true) or
%   case_sensitive(true) for substrings; cursor(N) pages), all bounded by
%   the limits; it cannot reach another conversation. Items are
%   conversation_message_view([content(C), role(R), sequence(N)]); a
%   search hit also carries window([View, ...]), the message before and
%   after it in its session (within the byte limit), and its text for a
%   model is those turns as "[N] role: text" lines, so a question that
%   matches brings its answer. Delete
%   it with context_delete/2.

%!  conversation_wait(+Conversation, +AfterSeq, +Options, -Outcome) is det.
%
%   Waits until the conversation has messages after sequence AfterSeq (a
%   nonnegative integer; 0 for any) and returns them: ok(Records) in
%   sequence order, limit(N|all) keeping the first N. With timeout(Secs)
%   and nothing new within it, ok([]): a loop's next round, not an error.
%   Without it the wait lasts until a message comes or the query's own
%   time limit. It sees appends of this program on every store and, on a
%   postgres(DSN) store, of every process that shares the database
%   (LISTEN/NOTIFY: nothing is polled).
%
%   ?- conversation_wait(C, 41, [timeout(30)], ok(New)).

%!  conversation_stats(+Conversation, -Outcome) is det.
%
%   ok(conversation_stats([assistant_messages, content_bytes,
%   conversation_id, messages, system_messages, tool_messages,
%   user_messages])), read from counters (O(1)).

%!  conversation_export(+Conversation, +Format, -Outcome) is det.
%
%   Format term gives ok(conversation_export([conversation, conversation_id,
%   messages])) with messages losslessly; jsonl gives the OpenAI
%   chat-messages JSONL text; rlmpl_jsonl adds the conversation's
%   documents (turn receipts, warm artifacts, every version) as
%   {"rlmpl_document": ...} lines after the messages, a backup that
%   conversation_import/3 restores whole. Any other format is a domain
%   error.

%!  conversation_import(+Conversation, +File, -Outcome) is det.
%
%   Appends the messages of File, OpenAI chat-messages JSONL read from the
%   program's directory, in batches: ok(import_result([documents(D),
%   messages(N), skipped(S)])). Each line is keyed by the file's name and
%   its line number, so importing the same file again appends only the
%   lines it did not store before (S counts the others), and a stored line
%   the file now says otherwise is detail(idempotency_key_reused). Document
%   lines of an rlmpl_jsonl export restore receipts and warm artifacts with
%   their versions, and the messages' idempotency keys, so the receipts'
%   turns are found again. A UTF-8 byte order mark is ignored. An import
%   is all or nothing: every line is checked before anything is written,
%   and a malformed line (bad JSON, invalid UTF-8, not a message), a tool
%   result that answers no call before it, as for conversation_append/3
%   (detail(orphan_tool_result); `rlmpl conv import --lenient` stores such
%   a transcript as it is and packs leave those results out), or a key
%   or document version the conversation holds otherwise fails it with an
%   error naming the line, and nothing is stored. A missing
%   File is existence_error(source_sink, File); one outside the program's
%   directory (through a symbolic link) is permission_error(open,
%   source_sink, File).

%!  conversation_pin(+Conversation, +Target, -Outcome) is det.
%
%   Pins the stored messages Target names, message(Seq) or range(From, To),
%   or unpins them under unpin(Target). A pinned message is in every pack
%   and turn of the conversation, first after the fixed sections, never
%   summarized away and never dropped for an older turn; when pinned
%   messages cannot fit, the pack fails closed with
%   context_budget_error([kind(pinned_context_exceeds_limit), units(Ids),
%   ...]). System messages are pinned by default (context_pinned_role/1);
%   unpinning one overrides that, so a program that replaces its
%   instructions appends the new system message and unpins the old one.
%   Pins are durable (one versioned document of the conversation, in
%   exports) and the last operation covering a message wins. Outcome is
%   ok(conversation_pin([changed(Bool), conversation_id(Id), from(F),
%   pinned(Bool), to(T)])); changed(false) means nothing was written (the
%   pin already held). A range outside the stored messages is
%   detail(invalid_range(...)); a tool call or tool result cannot be pinned
%   (pinned messages render first, apart from their group):
%   detail(unpinnable_message(Id, From, To)). Not undone on backtracking.
%   A Target of another shape is a domain_error(pin_target, Target).
%
%   ?- conversation_pin(C, range(3, 4), ok(P)).
%   ?- conversation_pin(C, unpin(message(1)), ok(P)).
