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
	rlmpl conv list|show|search|export|import [--store DIR] ...
	                           inspect and load conversations: show ID
	                           [--recent N], search ID QUERY [--max N]
	                           [--window N] [--role R] [--exact] [--cold],
	                           export ID [--documents] (OpenAI JSONL; with
	                           receipts and warm artifacts), import ID
	                           FILE.jsonl (again: only its new lines)
	rlmpl pack --conv ID [--store DIR] [--model M] [--max-context N]
	           [--provider-window N] [--reserve N] [--safety N]
	           [--min-recent N] [--max-candidates N] [--explain] [--json]
	                           the context the conversation would send: what
	                           went in, what was left out, tokens per stage
	rlmpl chat --conv ID [--provider P] [--base-url URL] [--model M]
	           [--system TEXT] [--max-context N] [--direct] [--json]
	                           talk over a managed conversation: each line is
	                           a turn, streamed; /ledger, /receipt, /search
	                           TEXT, /quit; --direct answers without a
	                           planner (history tools instead)
	rlmpl receipt list|show TURN|diff TURN_A TURN_B --conv ID
	                           what each turn sent: units, tokens per stage,
	                           request hashes, usage
	rlmpl turn replay TURN --conv ID
	                           re-render a stored turn's requests and check
	                           their SHA-256 against its receipt
	rlmpl warm list|show KEY|publish --range S-E --fields FILE|--rlm --conv ID
	                           warm summaries of older history: published
	                           versions, their representations; publish
	                           from a file of fields or have a model write
	                           them (--rlm, with the provider flags)
	rlmpl version              print the runtime version (also --version)
	rlmpl help                 print this text (also -h, --help); rlmpl run
	                           --help and rlmpl repl --help tell more

Scripts see ARGS in current_prolog_flag(argv, [rlmpl|ARGS]). They may
consult and open for reading the files of FILE's directory; nothing else of
the file system is reachable, and nothing can be written.

Conversations live in stores under the state directory,
$XDG_STATE_HOME/rlmpl (~/.local/state/rlmpl) unless --state says otherwise;
--store names one (a name under it, or an absolute directory). A program
run by run or repl opens persist(Name) under it, and a directory outside it
only when --grant DIR (repeatable) names it.

Providers are named once for every command and script: in
$XDG_CONFIG_HOME/rlmpl/providers.toml (~/.config/rlmpl/providers.toml) and
in the environment (OPENAI_API_KEY, OPENAI_BASE_URL, OPENROUTER_API_KEY,
DEEPSEEK_API_KEY, OLLAMA_HOST). Flags and a program's own provider settings
win over the file, the file over the environment, the environment over the
presets (openai, openrouter, deepseek, ollama, vllm, llamacpp). Keys are
read from the environment when each request is made, never from the file.

Exit status: 0 when the program ends normally, N after halt(N), 1 on a syntax
error, an uncaught exception or a failed main goal, 2 on a usage error, 130
when interrupted (SIGINT).

In the top level, type a goal ending with a full stop. A deterministic answer
ends with "."; after one that left a choice point, type ; for the next one or
press return to stop. halt. leaves.
*/
package main
