package mcp

import (
	"fmt"
	"strings"
)

// Kinds of [Error]: what went wrong, for a program to branch on and a
// model to read.
const (
	KindUnknownServer = "unknown_server" // no server of that name is configured
	KindStart         = "start_failed"   // the server did not start or initialize (in time)
	KindTimeout       = "timeout"        // no answer within the server's Timeout; the request was cancelled
	KindExited        = "server_exited"  // the server exited, or its connection ended, during the request
	KindProtocol      = "protocol_error" // the server sent something that is not MCP
	KindRequest       = "request_failed" // the server refused the request (a JSON-RPC error: unknown tool, bad arguments)
	KindToolError     = "tool_error"     // the tool ran and reported an error (isError)
	KindUnknownTool   = "unknown_tool"   // a grant names a tool the server does not list
	KindNotGranted    = "not_granted"    // a call of a tool no grant allows
)

// Error is a failed request to an MCP server: the server, the tool (""
// for a list or a start), the kind (Kind* constants) and a message that
// says what happened in words a model can act on. It never contains a
// header value or a token. A server that dies, hangs or sends garbage is
// an Error, never a panic.
type Error struct {
	Server  string
	Tool    string
	Kind    string
	Message string
	Err     error // the cause, when it shows no secret
}

func (e *Error) Error() string {
	if e.Tool == "" {
		return fmt.Sprintf("mcp server %s: %s: %s", e.Server, e.Kind, e.Message)
	}
	return fmt.Sprintf("mcp server %s: tool %s: %s: %s", e.Server, e.Tool, e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// redacted replaces every secret in the message; a cause whose text shows
// one is dropped (its chain would print it).
func (e *Error) redacted(secrets []string) *Error {
	for _, s := range secrets {
		if len(s) < 4 {
			continue
		}
		e.Message = strings.ReplaceAll(e.Message, s, "<redacted>")
		if e.Err != nil && strings.Contains(e.Err.Error(), s) {
			e.Err = nil
		}
	}
	return e
}

// CeilingError is a server whose granted tools' definitions take more
// tokens than its ceiling (Server.MaxToolTokens): the turn is refused
// rather than sent with some of them silently left out.
type CeilingError struct {
	Server string
	Tools  int   // the tools granted
	Tokens int   // their definitions, as the request renders them
	Limit  int64 // the ceiling
}

func (e *CeilingError) Error() string {
	return fmt.Sprintf("mcp server %s: the definitions of its %d granted tools take %d tokens, over its ceiling of %d (max_tool_tokens): grant fewer tools (server:tool,pattern) or raise the ceiling",
		e.Server, e.Tools, e.Tokens, e.Limit)
}
