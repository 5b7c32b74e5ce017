package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/mcp/mcptest"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func newServers(t *testing.T, log *logLines, srvs ...mcp.Server) *mcp.Servers {
	t.Helper()
	conf := map[string]mcp.Server{}
	for _, s := range srvs {
		conf[s.Name] = s
	}
	opts := &mcp.Options{Getenv: func(k string) string {
		return map[string]string{"TEST_TOKEN": "s3cret-token", "TEST_TEAM": "blue-team"}[k]
	}}
	if log != nil {
		opts.Logger = slog.New(log)
	}
	s, err := mcp.New(conf, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// eventually polls cond until it holds (notifications arrive on their
// own schedule), failing after a generous bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 400 {
		if cond() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

func kindOf(err error) string {
	var e *mcp.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// TestCallResults: text, images, structured content and isError come back
// as the model reads them and as they are kept, over both transports.
func TestCallResults(t *testing.T) {
	s := newServers(t, nil, mcptest.Stdio("local"), mcptest.HTTP(t, "remote", mcptest.NewServer()))
	for _, server := range []string{"local", "remote"} {
		for _, tc := range []struct {
			tool, args, text string
			images           int
			isError          bool
		}{
			{"echo", `{"text":"hi"}`, "echo: hi", 0, false},
			{"image", ``, "a dot\n[image 1: image/png, 67 bytes]", 1, false},
			{"structured", ``, `{"n":42,"unit":"apples"}`, 0, false},
			{"fail", ``, "the disk is on fire", 0, true},
		} {
			t.Run(server+"/"+tc.tool, func(t *testing.T) {
				res, err := s.Call(context.Background(), server, tc.tool, []byte(tc.args))
				if err != nil {
					t.Fatal(err)
				}
				if res.Text != tc.text || len(res.Images) != tc.images || res.IsError != tc.isError {
					t.Fatalf("Call(%s) = %q, %d images, isError %v; want %q, %d, %v", tc.tool, res.Text, len(res.Images), res.IsError, tc.text, tc.images, tc.isError)
				}
				if tc.images > 0 && !strings.HasPrefix(res.Images[0].DataURL(), "data:image/png;base64,iVBOR") {
					t.Fatalf("image = %.40s", res.Images[0].DataURL())
				}
			})
		}
	}
}

// TestHangIsBoundedByTimeout: a tool that never answers ends at the
// server's timeout, the server is told (notifications/cancelled: its
// handler's context ends, and it says so on stderr, which reaches the
// log), and the connection still serves the next call.
func TestHangIsBoundedByTimeout(t *testing.T) {
	log := &logLines{}
	srv := mcptest.Stdio("slow")
	srv.Timeout = 300 * time.Millisecond
	s := newServers(t, log, srv)
	_, err := s.Call(context.Background(), "slow", "hang", nil)
	if kindOf(err) != mcp.KindTimeout {
		t.Fatalf("hang = %v, want a timeout", err)
	}
	eventually(t, "the server logs its cancelled call", func() bool { return log.has("hang: cancelled by the client") })
	if !log.has("mcp_server=slow") {
		t.Errorf("stderr lines do not name the server: %q", log.lines)
	}
	if res, err := s.Call(context.Background(), "slow", "echo", []byte(`{"text":"still here"}`)); err != nil || res.Text != "echo: still here" {
		t.Fatalf("after the timeout: %v, %v", res, err)
	}
}

// TestCallerCancels: a caller that gives up gets its own context's error
// (a control signal), not a server error.
func TestCallerCancels(t *testing.T) {
	s := newServers(t, nil, mcptest.Stdio("local"))
	if _, err := s.Tools(context.Background(), "local"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, "local", "hang", nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || kindOf(err) != "" {
		t.Fatalf("cancelled call = %v, want context.Canceled", err)
	}
}

// TestBrokenServers: a server that exits mid-call or writes garbage is an
// error of its kind, with its last stderr lines, and the next call starts
// it again.
func TestBrokenServers(t *testing.T) {
	for _, tc := range []struct{ tool, kind, says string }{
		{"exit", mcp.KindExited, "exit: goodbye"},
		{"garbage", mcp.KindProtocol, "not MCP"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			s := newServers(t, nil, mcptest.Stdio("flaky"))
			_, err := s.Call(context.Background(), "flaky", tc.tool, nil)
			if kindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%s = %v, want %s saying %q", tc.tool, err, tc.kind, tc.says)
			}
			res, err := s.Call(context.Background(), "flaky", "echo", []byte(`{"text":"again"}`))
			if err != nil || res.Text != "echo: again" {
				t.Fatalf("after %s: %v, %v", tc.tool, res, err)
			}
		})
	}
}

// TestBigResult: 5 MB of text arrive whole over stdio (the model sees an
// excerpt; the runtime cuts it, see host/runtime).
func TestBigResult(t *testing.T) {
	s := newServers(t, nil, mcptest.Stdio("local"))
	res, err := s.Call(context.Background(), "local", "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Text) != mcptest.BigSize {
		t.Fatalf("big = %d bytes, want %d", len(res.Text), mcptest.BigSize)
	}
}

// TestStartFailures: a server that cannot start is a start_failed error
// that says why, and an unknown server names the configured ones.
func TestStartFailures(t *testing.T) {
	quick := mcp.Server{Name: "quits", Command: "sh", Args: []string{"-c", "echo no config file >&2; exit 1"}}
	s := newServers(t, nil, mcp.Server{Name: "missing", Command: "/nonexistent/mcp-server"}, quick,
		mcp.Server{Name: "secret", URL: "http://127.0.0.1:1/mcp", Credential: "UNSET_TOKEN"})
	for _, tc := range []struct{ server, kind, says string }{
		{"missing", mcp.KindStart, "no such file"},
		{"quits", mcp.KindStart, "no config file"},
		{"secret", mcp.KindStart, "UNSET_TOKEN is not set"},
		{"nope", mcp.KindUnknownServer, "configured: missing, quits, secret"},
	} {
		_, err := s.Tools(context.Background(), tc.server)
		if kindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Tools(%s) = %v, want %s saying %q", tc.server, err, tc.kind, tc.says)
		}
	}
}

// TestHTTPHeadersAreSecrets: headers and the bearer token reach the
// server, read from the environment at connection, and no error shows
// them.
func TestHTTPHeadersAreSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.NewServer() }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the servers' Close: their event stream ends first
	s := newServers(t, nil, mcp.Server{Name: "remote", URL: ts.URL, Credential: "TEST_TOKEN", Headers: map[string]string{"X-Team": "env:TEST_TEAM", "X-Plain": "plain-value"}})
	if _, err := s.Call(context.Background(), "remote", "echo", []byte(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := [3]string{seen.Get("Authorization"), seen.Get("X-Team"), seen.Get("X-Plain")}
	mu.Unlock()
	if got != [3]string{"Bearer s3cret-token", "blue-team", "plain-value"} {
		t.Fatalf("headers = %q", got)
	}
	cfg, _ := s.Config("remote")
	if str := cfg.String(); strings.Contains(str, "plain-value") || strings.Contains(str, "TEST_TEAM") {
		t.Fatalf("String shows a header value: %s", str)
	}
}

// TestListChanges: the tool list is cached until the server says it
// changed; a grant allows what it matched when first resolved, so a tool
// the server adds later widens nothing; a new grant naming it does.
func TestListChanges(t *testing.T) {
	srv := mcptest.NewServer()
	s := newServers(t, nil, mcptest.HTTP(t, "remote", srv))
	ctx := context.Background()
	names := func(ts *mcp.Toolset) string {
		var out []string
		for _, tool := range ts.Tools() {
			out = append(out, tool.FunctionName())
		}
		return strings.Join(out, " ")
	}
	all, err := s.Grant(ctx, []mcp.Grant{{Server: "remote"}})
	if err != nil {
		t.Fatal(err)
	}
	some, err := s.Grant(ctx, []mcp.Grant{{Server: "remote", Tools: []string{"e*", "l*"}}})
	if err != nil {
		t.Fatal(err)
	}
	if names(some) != "remote__echo remote__exit" {
		t.Fatalf("remote:e*,l* = %s", names(some))
	}
	before := names(all)
	if _, err := s.Call(ctx, "remote", "grow", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the list change is seen", func() bool {
		tools, err := s.Tools(ctx, "remote")
		return err == nil && len(tools) == len(all.Tools())+1
	})
	for _, g := range []mcp.Grant{{Server: "remote"}, {Server: "remote", Tools: []string{"l*", "e*"}}} {
		again, err := s.Grant(ctx, []mcp.Grant{g})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(names(again), "late") {
			t.Fatalf("grant %s widened to a tool added after it: %s", g, names(again))
		}
	}
	if got := names(all); got != before {
		t.Fatalf("a resolved toolset changed: %s", got)
	}
	late, err := s.Grant(ctx, []mcp.Grant{{Server: "remote", Tools: []string{"late"}}})
	if err != nil || names(late) != "remote__late" {
		t.Fatalf("a new grant of late = %v, %v", late, err)
	}
	srv.RemoveTools("echo")
	eventually(t, "a removed tool is no longer offered", func() bool {
		ts, err := s.Grant(ctx, []mcp.Grant{{Server: "remote"}})
		return err == nil && !strings.Contains(names(ts), "echo")
	})
	if _, err := s.Grant(ctx, []mcp.Grant{{Server: "remote", Tools: []string{"nosuch"}}}); kindOf(err) != mcp.KindUnknownTool {
		t.Fatalf("a grant of an unknown tool = %v", err)
	}
	_, _, err = some.Call(ctx, "remote__fail", nil)
	if kindOf(err) != mcp.KindNotGranted {
		t.Fatalf("an ungranted call = %v", err)
	}
}

// TestCeiling: a server whose granted definitions take more than its
// ceiling is an error that names it and the numbers.
func TestCeiling(t *testing.T) {
	srv := mcptest.HTTP(t, "remote", mcptest.NewServer())
	srv.MaxToolTokens = 40
	s := newServers(t, nil, srv)
	reg, err := tokenizer.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := reg.Counter("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Grant(context.Background(), []mcp.Grant{{Server: "remote", Tools: []string{"fail"}}})
	if err != nil {
		t.Fatal(err)
	}
	costs, err := one.Costs(c)
	if err != nil || len(costs) != 1 || costs[0].Tokens.Tokens == 0 || costs[0].Tokens.Tokens > 40 {
		t.Fatalf("one tool: %+v, %v", costs, err)
	}
	all, err := s.Grant(context.Background(), []mcp.Grant{{Server: "remote"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = all.Costs(c)
	var ce *mcp.CeilingError
	if !errors.As(err, &ce) || ce.Server != "remote" || ce.Tools != 9 || ce.Limit != 40 || ce.Tokens <= 40 {
		t.Fatalf("all tools: %v", err)
	}
}

// TestStartAndClose: Start starts a server before its first use (its
// stderr reaches the log with no call made), Close stops its process,
// and nothing is used after Close.
func TestStartAndClose(t *testing.T) {
	log := &logLines{}
	s := newServers(t, log, mcptest.Stdio("local"))
	s.Start("local")
	var pid int
	eventually(t, "the server says its pid", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		for _, l := range log.lines {
			if i := strings.Index(l, "test server: pid "); i >= 0 {
				fmt.Sscanf(l[i:], "test server: pid %d", &pid)
			}
		}
		return pid > 0
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the server's process ends", func() bool { return syscall.Kill(pid, 0) != nil })
	if _, err := s.Tools(context.Background(), "local"); !errors.Is(err, mcp.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
