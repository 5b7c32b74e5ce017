package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rlmpl/rlmpl/host/mcp"
)

// The test servers: the SDK's server, over Streamable HTTP in this
// process, and over stdio in a child process (this test binary again,
// with RLMPL_MCP_TEST_SERVER set), so a server can hang, exit mid-call or
// write garbage for real.

func TestMain(m *testing.M) {
	if os.Getenv("RLMPL_MCP_TEST_SERVER") != "" {
		srv := newTestServer()
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bigSize is the size of the big tool's result.
const bigSize = 5 << 20

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// newTestServer is a server with a tool for every case: echo, image,
// structured, fail (isError), big (5 MB of text), hang (until
// cancelled, then it says so on stderr), exit (the process ends
// mid-call), garbage (a line that is not JSON on stdout), and grow (adds
// a tool: tools/list_changed).
func newTestServer() *sdk.Server {
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
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a dot"}, &sdk.ImageContent{MIMEType: "image/png", Data: tinyPNG}}}, nil
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
			return text(strings.Repeat("lorem ipsum dolor sit amet ", bigSize/27+1)[:bigSize]), nil
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

// stdioServer configures this test binary as a stdio server.
func stdioServer(name string) mcp.Server {
	exe, _ := os.Executable()
	return mcp.Server{Name: name, Command: exe, Env: map[string]string{"RLMPL_MCP_TEST_SERVER": "1"}}
}

// httpServer serves srv over Streamable HTTP and configures it.
func httpServer(t *testing.T, name string, srv *sdk.Server) mcp.Server {
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return mcp.Server{Name: name, URL: ts.URL}
}

// logLines collects log records.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logLines) WithAttrs(as []slog.Attr) slog.Handler { return &withAttrs{l, as} }
func (l *logLines) WithGroup(string) slog.Handler         { return l }

func (l *logLines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

type withAttrs struct {
	l  *logLines
	as []slog.Attr
}

func (w *withAttrs) Enabled(ctx context.Context, lv slog.Level) bool { return true }
func (w *withAttrs) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(w.as...)
	return w.l.Handle(ctx, r)
}
func (w *withAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &withAttrs{w.l, append(append([]slog.Attr{}, w.as...), as...)}
}
func (w *withAttrs) WithGroup(string) slog.Handler { return w }
