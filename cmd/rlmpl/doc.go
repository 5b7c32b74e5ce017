/*
Rlmpl runs Prolog programs on the rlmpl runtime: bounded recursive LLM
completions and managed conversations for long-lived agents.

Usage:

	rlmpl run FILE [ARGS...]   consult FILE, run its initialization(main, main)
	                           goals, exit with their status
	rlmpl repl [FILE...]       interactive top level (after consulting FILEs)
	rlmpl complete --query Q --context-file F [--provider P] [--base-url URL]
	               [--model M] [--credential ENV|none]
	                           one bounded completion over F's text; prints
	                           the answer, the trajectory and the usage
	rlmpl providers            the providers a call may name, as they resolve
	                           here (settings and their sources, whether each
	                           key is set), and the default
	rlmpl conv list|show|search|stats|export|import [--store DIR] ...
	                           inspect and load conversations: show ID
	                           [--recent N], search ID QUERY [--max N]
	                           [--window N] [--role R] [--exact] [--cold],
	                           stats ID, export ID [--documents] (OpenAI
	                           JSONL; with receipts and warm artifacts),
	                           import ID FILE.jsonl (again: only its new
	                           lines; a tool result answering no call
	                           fails it unless --lenient); messages show
	                           their author's name, images as [image:
	                           caption], tool calls as
	                           → tool name(arguments) [id]; search hits come
	                           best first with their score (and what their
	                           context added: the two best rank by their own);
	                           ranked search reads a message's first MiB
	rlmpl pack --conv ID [--store DIR] [--model M] [--max-context N]
	           [--provider-window N] [--reserve N] [--safety N]
	           [--min-recent N] [--max-candidates N] [--explain] [--json]
	                           the context the conversation would send: what
	                           went in, what was left out, tokens per stage
	rlmpl chat --conv ID [--provider P] [--base-url URL] [--model M]
	           [--system TEXT] [--max-context N] [--direct] [--json]
	           [--mcp SERVER[:TOOL,PATTERN,...]]...
	                           talk over a managed conversation: each line is
	                           a turn, streamed; /ledger, /receipt, /search
	                           TEXT, /quit; Ctrl-C cancels the running turn
	                           (or clears the line), Ctrl-D leaves; --direct
	                           answers without a planner (history tools
	                           instead); while it waits for a line it
	                           shows what other workers append to the
	                           conversation (a postgres:// store), marked
	                           "from elsewhere", above the line being typed;
	                           --mcp grants an MCP server's tools (all, or
	                           those named; repeatable): the servers start
	                           with the chat and stop with it
	rlmpl mcp list [SERVER...] [--model M] [--json]
	                           each MCP server of providers.toml, started
	                           for the occasion, with its tools and the
	                           tokens each definition costs in a request
	                           (counted for --model, else the default
	                           provider's model), its total and ceiling
	rlmpl receipt list|show TURN|diff TURN_A TURN_B|stats|chart --conv ID
	                           what each turn sent: units, tokens per stage,
	                           request hashes, usage, cached tokens, cost;
	                           list pages with --after SEQ --limit N; stats
	                           sums every turn: prompt tokens by stage,
	                           cached share, output, cost, latency; chart
	                           -o FILE.svg draws each turn's request by
	                           stage, the ceiling and the cached share
	rlmpl turn replay TURN --conv ID
	                           re-render a stored turn's requests and check
	                           their SHA-256 against its receipt
	rlmpl warm list|show KEY|publish --range S-E --fields FILE|--rlm|retire --range S-E --conv ID
	                           warm summaries of older history: published
	                           versions, their representations; publish
	                           from a file of fields or have a model write
	                           them (--rlm, with the provider flags; warns
	                           when the range overlaps another); retire one
	                           so packs no longer offer it
	rlmpl store status|migrate [--store postgres://...] [--json]
	                           a PostgreSQL store's schema version beside
	                           this binary's: applied and pending
	                           migrations; migrate applies them (as the
	                           first open does); a database migrated by a
	                           newer rlmpl fails both (exit 1)
	rlmpl bench engine [--only REGEXP] [--runs N] [--swipl PATH|none] [--json]
	                           the Prolog engine on classic workloads (naive
	                           reverse, tak, queens, fact lookups, ...), each
	                           run in a fresh process, beside SWI-Prolog when
	                           swipl is installed: CPU seconds, ratio, peak RSS
	rlmpl version              print the runtime version (also --version)
	rlmpl help                 print this text (also -h, --help); rlmpl run
	                           --help and rlmpl repl --help tell more

Scripts see ARGS in current_prolog_flag(argv, [rlmpl|ARGS]). They may
consult and open for reading the files of FILE's directory; nothing else of
the file system is reachable (a symbolic link that leads out of it is
refused with a permission error), and nothing can be written.

Conversations live in stores under the state directory,
$XDG_STATE_HOME/rlmpl (~/.local/state/rlmpl) unless --state says otherwise;
--store names one (a name under it, an absolute directory, or a
postgres:// URL: a PostgreSQL store many processes share; sqlite:PATH, an
SQLite file the processes of one machine share with no server; memory).
A name or directory is a badger store, one process's at a time
(badger:PATH says so). Without --store
a command uses $RLMPL_STORE, else the store key of config.toml beside
providers.toml (store = "postgres://..."), else "default". Commands that
only read open an existing store and create nothing ("store not found"
otherwise); conv import and chat create a missing store, never in a
directory that holds other files. A program run by run or repl opens
persist(Name) under it, and a directory outside it only when --grant DIR
(repeatable) names it. Numbers are checked: a negative --max-context or a
--max of 0 is a usage error (exit 2), not a default.

Providers are named once for every command and script: in
$XDG_CONFIG_HOME/rlmpl/providers.toml (~/.config/rlmpl/providers.toml) and
in the environment (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
ANTHROPIC_BASE_URL, OPENROUTER_API_KEY, DEEPSEEK_API_KEY, OLLAMA_HOST).
Flags and a program's own provider settings win over the file, the file
over the environment, the environment over the presets (openai, anthropic,
openrouter, deepseek, ollama, vllm, llamacpp). A provider speaks OpenAI's
chat completions unless api = "anthropic" (the anthropic preset's):
Anthropic's Messages API, with cache breakpoints where each request's
stable prefix ends (cache_ttl = "1h" keeps them an hour). Keys are read
from the environment when each request is made, never from the file. A
[prices."MODEL"] table there (input, cached_input, cache_write, output: US
dollars per million tokens; a "prefix-*" key covers a family) gives
receipts a cost; there is no default table. Where a model has no known
tokenizer, its counts are estimated, and calibrated by the prompt tokens
its provider reports (kept in the state directory). An [mcp.NAME] table there configures an MCP
server: command, args and env (stdio), or url, headers and credential =
"env:VARIABLE" (Streamable HTTP); timeout, start_timeout, max_tool_tokens
and start = "session" (docs/mcp.md). A server's stderr goes to the log
(--log-format).

Traces: run, repl and chat send OpenTelemetry spans of every managed turn
when the standard environment asks: OTEL_TRACES_EXPORTER=otlp (to
OTEL_EXPORTER_OTLP_ENDPOINT, over HTTP; an endpoint alone turns it on) or
console (one JSON line per span on stderr); OTEL_SERVICE_NAME names the
service. Message content is recorded only with
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; keys never are.

--json, on every command that shows something (conv list, show, search,
stats; receipt list, show, stats; warm list, show; pack; providers;
complete; and chat, whose /search, /ledger and /receipt become events too),
prints JSON Lines: one compact object per line, keys in snake_case, times
as *_ms (Unix milliseconds), messages in the OpenAI chat format that export
writes.

Exit status: 0 when the program ends normally, N after halt(N), 1 on a syntax
error, an uncaught exception or a failed main goal (chat: a failed turn,
a cancelled one included), 2
on a usage or configuration error (a bad flag; providers.toml or config.toml
unreadable, not TOML, with an unknown key or a key written in it; a provider
that does not resolve, a key missing from the environment: all checked before
anything is written), 130 when interrupted (SIGINT).

In the top level, type a goal ending with a full stop. A deterministic answer
ends with "."; after one that left a choice point, type ; for the next one or
press return to stop. halt. leaves.
*/
package main
