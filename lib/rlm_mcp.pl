/** <module> Tools from MCP servers

Model Context Protocol servers give a turn its tools: a stdio server (a
command, its arguments and environment) or a Streamable HTTP server (a
URL, headers, a bearer token named by credential(env(V))). The servers of
the configuration file (providers.toml's [mcp.NAME] tables) are known to
every session; mcp_server/3 adds one for this session. A server starts at
its first use (or with the session: start(session)) and stops with the
session; its stderr goes to the log. conversation_turn/4's mcp(Grants)
option offers a turn the tools its grants allow, charged in the pack's
tool stage exactly as the request renders them. The predicates are
defined in Go (host/pred_mcp.go, over host/mcp).

Errors are error(mcp_error([kind(K), message(M), server(S), ...]))
outcomes: kind configuration_error (with field(F)), unknown_server,
start_failed, timeout, server_exited, protocol_error, request_failed,
unknown_tool (a grant naming a tool the server does not list), and
ceiling_exceeded (with tokens(N), limit(L), tools(K)).

Exports:
    mcp_server/3                 % +Name, +Options, -Outcome
    mcp_tools/3                  % +Server, +Options, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API (defined in Go) --- */

%!  mcp_server(+Name, +Options, -Outcome) is det.
%
%   Configures MCP server Name for this session. Options: command(C),
%   args(L) and env([Name-Value, ...]) for a stdio server (its environment
%   is the process's with env over it); or url(U), headers([Name-Value,
%   ...]) (a value "env:VARIABLE" is read from the environment when the
%   server connects; every header value is a secret: no error or log shows
%   it) and credential(env(V)) (a bearer token, sent as Authorization) for
%   a Streamable HTTP server; timeout(Seconds) for each request (default
%   30), start_timeout(Seconds) (default 60), max_tool_tokens(N), the
%   ceiling on the tokens of its granted tools' definitions (default
%   8192), and start(first_use | session) (default first_use). The same
%   configuration again is no change. Outcome is ok(mcp_server(Name)), or
%   error(mcp_error([..., kind(configuration_error), ...])) for a server
%   configured differently under that name, or settings only a
%   configuration can judge (a token written as the credential: it is
%   never echoed).
%
%   ?- mcp_server(everything, [command(npx),
%          args(['-y', '@modelcontextprotocol/server-everything@2026.8.31'])], O).
%   O = ok(mcp_server(everything)).

%!  mcp_tools(+Server, +Options, -Outcome) is det.
%
%   Lists the tools Server offers now (starting it if needed), each with
%   the tokens its definition costs in a request's tool stage, counted as
%   token_count_text/3 would under Options (model(M) or encoding(E); the
%   estimator without either). Outcome is ok(Tools), Tools a list of
%   mcp_tool([description(D), function(F), name(N), schema(S),
%   tokens(token_count([...]))]) sorted by name, F the name a model calls
%   it by (Server__Name), S its input schema as JSON text; or
%   error(mcp_error([...])).
