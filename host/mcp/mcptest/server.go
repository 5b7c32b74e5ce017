// Package mcptest provides MCP servers for tests: the SDK's server with a
// tool for every case ([NewServer]), over Streamable HTTP in the test's
// process ([HTTP]) or over stdio in a child process ([Stdio]: the test
// binary run again, so that a server can hang, exit mid-call or write
// garbage for real; the package's TestMain must call [ServeChild]).
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rlmpl/rlmpl/host/mcp"
)

// serverEnv marks the test binary run as a stdio server.
const serverEnv = "RLMPL_MCP_TEST_SERVER"

// ServeChild serves [NewServer] over stdio and exits when this process
// is the child [Stdio] starts (it first says "test server: pid N" on
// stderr); otherwise it returns at once. Call it first thing in TestMain.
func ServeChild() {
	if os.Getenv(serverEnv) == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "test server: pid %d\n", os.Getpid()) // for tests of its end
	if err := NewServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// BigSize is the size of the big tool's result.
const BigSize = 5 << 20

// TinyPNG is the image tool's image, a 1×1 PNG.
var TinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// NewServer is a server with a tool for every case: echo (its text
// argument), image (text and a PNG), structured (structured content only),
// fail (isError), big (BigSize bytes of text), hang (until cancelled,
// then it says "hang: cancelled by the client" on stderr), exit (the
// process ends mid-call, over stdio), garbage (a line that is not JSON on
// stdout), and grow (adds the tool late: tools/list_changed).
func NewServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "rlmpl-test", Version: "1"}, nil)
	object := map[string]any{"type": "object"}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	srv.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes its text.", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"text": map[string]any{"type": "string", "description": "what to echo"}}, "required": []any{"text"}}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text("echo: " + args.Text), nil
		})
	srv.AddTool(&sdk.Tool{Name: "image", Description: "A tiny image.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a dot"}, &sdk.ImageContent{MIMEType: "image/png", Data: TinyPNG}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "structured", Description: "Structured content only.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"n": 42, "unit": "apples"}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text("the disk is on fire")
			r.IsError = true
			return r, nil
		})
	srv.AddTool(&sdk.Tool{Name: "big", Description: "Five megabytes of text.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(strings.Repeat("lorem ipsum dolor sit amet ", BigSize/27+1)[:BigSize]), nil
		})
	srv.AddTool(&sdk.Tool{Name: "hang", Description: "Never answers.", InputSchema: object},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			fmt.Fprintln(os.Stderr, "hang: cancelled by the client")
			return nil, ctx.Err()
		})
	srv.AddTool(&sdk.Tool{Name: "exit", Description: "Ends the server mid-call.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "exit: goodbye")
			os.Exit(3)
			return nil, nil
		})
	srv.AddTool(&sdk.Tool{Name: "garbage", Description: "Writes garbage on stdout.", InputSchema: object},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			os.Stdout.WriteString("this is not JSON\n")
			<-ctx.Done()
			return nil, ctx.Err()
		})
	srv.AddTool(&sdk.Tool{Name: "grow", Description: "Adds the tool late.", InputSchema: object},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.AddTool(&sdk.Tool{Name: "late", Description: "Added by grow.", InputSchema: object},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("late"), nil })
			return text("grown"), nil
		})
	return srv
}

// Stdio configures the test binary as a stdio server called name.
func Stdio(name string) mcp.Server {
	exe, _ := os.Executable()
	return mcp.Server{Name: name, Command: exe, Env: map[string]string{serverEnv: "1"}}
}

// HTTP serves srv over Streamable HTTP until the test ends and configures
// it as name. NB: close the Servers using it first (register their Close
// with t.Cleanup after calling HTTP): the server waits for their event
// streams to end.
func HTTP(t testing.TB, name string, srv *sdk.Server) mcp.Server {
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return mcp.Server{Name: name, URL: ts.URL}
}
