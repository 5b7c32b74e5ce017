// Package mcp is rlmpl's Model Context Protocol client, on the official Go
// SDK (github.com/modelcontextprotocol/go-sdk): it starts the MCP servers
// of a session, lists their tools, grants some of them and calls them. It
// knows nothing of Prolog, turns or packs: host/runtime offers a toolset
// in a turn (charged in the pack's tool stage, called under the grants),
// and the host and the CLI configure servers.
//
// # What it owns
//
//   - Configuration ([Server], [ParseConfig]: the [mcp.NAME] tables of
//     providers.toml): stdio servers (command, args, env) and Streamable
//     HTTP servers (url, headers, a bearer token named by credential), a
//     request timeout, a start timeout and a ceiling on the tokens of each
//     server's granted definitions. Header values and tokens are secrets:
//     no error, log line or String shows them, and tokens are read from
//     the environment when a server connects, never written in a file.
//   - The servers of one session ([Servers]): started on first use or
//     with the session ([Servers.Start]), stopped by [Servers.Close] (a
//     stdio server's process group, so that what npx started ends too;
//     on Linux a server also dies with its parent), a stdio server's
//     stderr logged line by line; tool lists cached per server until it
//     sends notifications/tools/list_changed; a server that exits or
//     breaks the protocol dropped and started again at the next use.
//   - Grants ([Grant], [Servers.Grant]): by server, and by tool name or
//     pattern; what a grant allows is fixed when it is first resolved, so
//     a server that adds tools later widens nothing. A [Toolset] is what
//     is allowed now: the definitions a model is offered (function names
//     server__tool, [Tool.FunctionName]), their cost per server with a
//     ceiling ([Toolset.Costs], [*CeilingError]), and the only calls that
//     reach a server ([Toolset.Call]).
//   - Calls ([Servers.Call]) bounded by the server's timeout, cancelled on
//     the server when they end early (notifications/cancelled, sent by
//     the SDK), with results rendered for a model ([Result]: text, images
//     by type and size, structured content, isError). Every failure is an
//     [*Error] of a documented kind (timeout, server_exited,
//     protocol_error, ...) that a turn hands the model as a tool error;
//     a done context returns ctx.Err(), the control signal.
//
// # Concurrency
//
// [Servers] and [Toolset] are safe for concurrent use. Servers starts a
// goroutine per connection (the start, then a watch for its end) and the
// SDK its own; Close ends them.
//
// # Usage
//
//	servers, _ := mcp.New(map[string]mcp.Server{
//		"everything": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31"}},
//	}, &mcp.Options{Environ: os.Environ(), Getenv: os.Getenv, Logger: logger})
//	defer servers.Close()
//	set, err := servers.Grant(ctx, []mcp.Grant{{Server: "everything", Tools: []string{"echo", "get-*"}}})
//	if err != nil { ... }
//	costs, err := set.Costs(counter) // tokens per server; a *CeilingError over a ceiling
//	tool, res, err := set.Call(ctx, "everything__echo", json.RawMessage(`{"message":"hi"}`))
package mcp
