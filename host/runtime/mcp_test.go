package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/mcp/mcptest"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func TestMain(m *testing.M) {
	mcptest.ServeChild()
	os.Exit(m.Run())
}

// mcpServers are servers for one test, closed at its end.
func mcpServers(t *testing.T, srvs ...mcp.Server) *mcp.Servers {
	t.Helper()
	conf := map[string]mcp.Server{}
	for _, s := range srvs {
		conf[s.Name] = s
	}
	s, err := mcp.New(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mcpTurn is a direct turn offering grants of servers.
func mcpTurn(m plan.Models, servers *mcp.Servers, ceiling int64, grants ...string) TurnOptions {
	o := directOpts(m, handle.New(nil), ceiling)
	o.MCP = &MCPTools{Servers: servers}
	for _, g := range grants {
		gr, err := mcp.ParseGrant(g)
		if err != nil {
			panic(err)
		}
		o.MCP.Grants = append(o.MCP.Grants, gr)
	}
	return o
}

func calls(tcs ...[2]string) plan.ModelResult {
	var r plan.ModelResult
	for i, tc := range tcs {
		r.ToolCalls = append(r.ToolCalls, tokenizer.ToolCall{ID: fmt.Sprintf("m%d", i+1), Type: "function",
			Function: tokenizer.FunctionCall{Name: tc[0], Arguments: tc[1]}})
	}
	return r
}

func toolNames(req tokenizer.Request) string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	return strings.Join(names, " ")
}

// TestDirectTurnCallsMCPTools: a direct turn offers the granted tools
// with the history tools, charged in the tool stage exactly as the
// request renders them (the receipt's per-server tokens are the sum of
// those stages); the calls reach the server; results (text, an image)
// are stored as tool messages with the answer — the image with its tool
// message, never sent — and the turn replays byte for byte.
func TestDirectTurnCallsMCPTools(t *testing.T) {
	servers := mcpServers(t, mcptest.Stdio("local"))
	c := memConv(t)
	m := &respondModels{replies: []plan.ModelResult{
		calls([2]string{"local__echo", `{"text":"hi"}`}, [2]string{"local__image", `{}`}),
		{Text: "done"}}}
	res, err := c.Turn(context.Background(), user("use the tools"), mcpTurn(m, servers, 20000, "local:echo,image"))
	if err != nil {
		t.Fatal(err)
	}
	first := m.reqs[0]
	if got := toolNames(first); got != "history_search history_slice history_peek local__echo local__image" {
		t.Fatalf("tools offered = %s", got)
	}
	counter, err := c.st.rt.Tokenizers().Counter("gpt-4o-2024-08-06")
	if err != nil {
		t.Fatal(err)
	}
	charged := 0
	for _, st := range counter.CountRequest(&first).Stages {
		if st.Kind == tokenizer.StageTool && strings.HasPrefix(first.Tools[st.Index].Function.Name, "local__") {
			charged += st.Count.Tokens
		}
	}
	r := res.Receipt
	if len(r.MCP) != 1 || r.MCP[0].Server != "local" || strings.Join(r.MCP[0].Tools, ",") != "echo,image" ||
		r.MCP[0].DefinitionTokens != charged || charged == 0 {
		t.Fatalf("receipt mcp = %+v, want echo,image costing %d tokens", r.MCP, charged)
	}
	var stage int64
	for _, s := range r.Context.Stages {
		if s.Name == "tool_definitions" {
			stage = s.Charged
		}
	}
	if stage < int64(charged) {
		t.Fatalf("the ledger's tool stage charged %d, less than the MCP definitions' %d", stage, charged)
	}
	if len(r.MCP[0].Calls) != 2 || r.MCP[0].Calls[0].Tool != "echo" || r.MCP[0].Calls[0].Status != "ok" ||
		r.MCP[0].Calls[1].Images != 1 || r.MCP[0].Calls[1].CallID != "m2" {
		t.Fatalf("receipt calls = %+v", r.MCP[0].Calls)
	}
	second := m.reqs[1].Messages
	if got := second[len(second)-2:]; got[0].Content != "echo: hi" || got[1].Content != "a dot\n[image 1: image/png, 67 bytes]" || len(got[1].Parts) != 0 {
		t.Fatalf("results sent = %+v", got)
	}
	var stored []string
	for seq := res.User.Seq + 1; seq <= res.Assistant.Seq; seq++ {
		rec, err := c.Message(seq)
		if err != nil {
			t.Fatal(err)
		}
		msg := rec.Message
		line := fmt.Sprintf("%s/%d/%q", msg.Role, len(msg.ToolCalls), msg.Content.PlainText())
		for _, p := range msg.Content.Parts {
			if p.Type == store.PartImageURL {
				line += " +" + p.URL[:strings.Index(p.URL, ",")]
			}
		}
		stored = append(stored, line)
	}
	want := `assistant/2/"" tool/0/"echo: hi" tool/0/"a dot\n[image 1: image/png, 67 bytes]" +data:image/png;base64 assistant/0/"done"`
	if got := strings.Join(stored, " "); got != want {
		t.Fatalf("stored:\n%s\nwant\n%s", got, want)
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
	// The next turn sends the stored result as its text: providers take
	// no image in a tool's result.
	m.reqs, m.replies = nil, []plan.ModelResult{{Text: "bye"}}
	if _, err := c.Turn(context.Background(), user("thanks"), mcpTurn(m, servers, 20000, "local:echo,image")); err != nil {
		t.Fatal(err)
	}
	for _, msg := range m.reqs[0].Messages {
		if msg.Role == tokenizer.RoleTool && len(msg.Parts) > 0 {
			t.Fatalf("a tool result was sent with parts: %+v", msg)
		}
	}
}

// TestDirectTurnMCPFailuresReachTheModel: a tool that hangs (bounded by
// its server's timeout), a server that exits mid-call or sends garbage,
// and a result marked as an error each go back to the model as a tool
// error naming the server, the tool and the kind; the turn goes on to an
// answer and its receipt records each call's failure.
func TestDirectTurnMCPFailuresReachTheModel(t *testing.T) {
	for _, tc := range []struct{ tool, kind string }{
		{"hang", mcp.KindTimeout},
		{"exit", mcp.KindExited},
		{"garbage", mcp.KindProtocol},
		{"fail", mcp.KindToolError},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			srv := mcptest.Stdio("local")
			srv.Timeout = 300 * time.Millisecond
			servers := mcpServers(t, srv)
			c := memConv(t)
			m := &respondModels{replies: []plan.ModelResult{calls([2]string{"local__" + tc.tool, `{}`}), {Text: "it failed, sorry"}}}
			res, err := c.Turn(context.Background(), user("try it"), mcpTurn(m, servers, 20000, "local"))
			if err != nil {
				t.Fatal(err)
			}
			sent := m.reqs[1].Messages[len(m.reqs[1].Messages)-1]
			want := fmt.Sprintf(`{"error":"tool_error","message":"mcp server local: tool %s: %s: `, tc.tool, tc.kind)
			if sent.Role != tokenizer.RoleTool || !strings.HasPrefix(sent.Content, want) {
				t.Fatalf("the model read %q, want %s...", sent.Content, want)
			}
			calls := res.Receipt.MCP[0].Calls
			if res.Assistant.Message.Content.PlainText() != "it failed, sorry" || len(calls) != 1 || calls[0].Status != "error" || calls[0].Error != tc.kind {
				t.Fatalf("answer %q, receipt calls %+v", res.Assistant.Message.Content.PlainText(), calls)
			}
		})
	}
}

// TestUngrantedMCPTools: a tool the grants leave out is not offered, and
// a call the model makes of it anyway is refused without reaching the
// server (exit would end it: it is still the same process afterwards,
// answering); a planner's tool step naming it fails preflight, while one
// naming a granted tool runs.
func TestUngrantedMCPTools(t *testing.T) {
	servers := mcpServers(t, mcptest.Stdio("local"))
	c := memConv(t)
	m := &respondModels{replies: []plan.ModelResult{calls([2]string{"local__exit", `{}`}, [2]string{"local__echo", `{"text":"alive"}`}), {Text: "ok"}}}
	res, err := c.Turn(context.Background(), user("exit"), mcpTurn(m, servers, 20000, "local:echo"))
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(m.reqs[0]); strings.Contains(got, "exit") {
		t.Fatalf("offered %s", got)
	}
	sent := m.reqs[1].Messages
	if refused := sent[len(sent)-2].Content; !strings.Contains(refused, `"error":"unknown_tool"`) {
		t.Fatalf("the ungranted call read %q", refused)
	}
	if echoed := sent[len(sent)-1].Content; echoed != "echo: alive" {
		t.Fatalf("the granted call after it read %q (the server was reached by the refused call?)", echoed)
	}
	if calls := res.Receipt.MCP[0].Calls; len(calls) != 1 || calls[0].Tool != "echo" {
		t.Fatalf("receipt calls = %+v", calls)
	}
	// The planner sees the granted tool's schema and its plan calls it; a
	// plan naming the ungranted one never runs.
	p := &planner{answers: []string{
		`{"steps":[{"op":"tool","name":"local__exit","args":{},"bind":"r"},{"op":"final","value":{"ref":"var","name":"r"}}]}`,
		`{"steps":[{"op":"tool","name":"local__echo","args":{"text":"planned"},"bind":"r"},{"op":"final","value":{"ref":"var","name":"r"}}]}`}}
	o := turnOpts(p, handle.New(nil))
	o.MCP = &MCPTools{Servers: servers, Grants: []mcp.Grant{{Server: "local", Tools: []string{"echo"}}}}
	o.Completion.PlannerAttempts = 2
	res, err = c.Turn(context.Background(), user("plan it"), o)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Assistant.Message.Content.PlainText(); v != "echo: planned" {
		t.Fatalf("planned answer = %q", v)
	}
	var toolsPart string
	for _, msg := range p.reqs[0].Messages {
		if strings.HasPrefix(msg.Content, "Tools:") {
			toolsPart = msg.Content
		}
	}
	if !strings.Contains(toolsPart, "local__echo: Echoes its text.") || strings.Contains(toolsPart, "local__exit") {
		t.Fatalf("the planner's tools: %q, want the granted one only", toolsPart)
	}
	if fb := fmt.Sprint(p.reqs[1].Messages); !strings.Contains(fb, "local__exit") {
		t.Fatalf("the second attempt was not told why the first plan failed: %s", fb)
	}
}

// TestOversizedMCPResult: a 5 MB result is sent as an excerpt with a note
// (the request stays under its ceiling), stored whole, and the turn
// replays; in the next turn's hot tail, the pack sends the stored result
// as an excerpt pointing at its sequence in the cold history.
func TestOversizedMCPResult(t *testing.T) {
	servers := mcpServers(t, mcptest.Stdio("local"))
	c := backends[0].conv(t) // on disk: a memory store keeps messages up to 1 MB
	m := &respondModels{replies: []plan.ModelResult{calls([2]string{"local__big", `{}`}), {Text: "that was long"}}}
	o := mcpTurn(m, servers, 8000, "local:big")
	o.Pack.Utilities.ToolExcerptPercent, o.Pack.Utilities.ToolExcerptTemplate = 25, "[cut: {tool} has {total} tokens, {shown} shown]"
	o.Pack.Utilities.ExcerptTokens, o.Pack.Utilities.ExcerptTemplate = 500, "[excerpt of message {seq}: {shown} of {total}]"
	res, err := c.Turn(context.Background(), user("read it"), o)
	if err != nil {
		t.Fatal(err)
	}
	sent := m.reqs[1].Messages[len(m.reqs[1].Messages)-1].Content
	if len(sent) > 20000 || !strings.HasPrefix(sent, "lorem ipsum") || !strings.Contains(sent, "[cut: local__big has ") {
		t.Fatalf("sent %d bytes ending %q", len(sent), sent[max(0, len(sent)-80):])
	}
	for _, call := range res.Receipt.Calls {
		if call.LocalPromptTokens > 8000 {
			t.Errorf("a round counted %d tokens over the 8000 ceiling", call.LocalPromptTokens)
		}
	}
	stored, err := c.Message(res.Assistant.Seq - 1)
	if err != nil || stored.Message.Role != store.RoleTool || len(stored.Message.Content.PlainText()) != mcptest.BigSize {
		t.Fatalf("stored result: %d bytes, %v", len(stored.Message.Content.PlainText()), err)
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
	m.reqs, m.replies = nil, []plan.ModelResult{{Text: "bye"}}
	o.Pack.Policy.MinRecentTurns = 4 // the call and its result are in the hot tail
	if _, err := c.Turn(context.Background(), user("and now?"), o); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, msg := range m.reqs[0].Messages {
		if msg.Role == tokenizer.RoleTool {
			found = strings.Contains(msg.Content, fmt.Sprintf("[excerpt of message %d:", stored.Seq))
		}
	}
	if !found {
		t.Fatalf("the next turn did not send the stored result as an excerpt")
	}
}

// TestMCPListChangesBetweenTurns: each turn lists what its servers offer
// now: a definition the server changed is charged as it is, a tool it
// removed is no longer offered, and one it added is not offered under the
// grant made before it (the grant widens nothing).
func TestMCPListChangesBetweenTurns(t *testing.T) {
	srv := mcptest.NewServer()
	servers := mcpServers(t, mcptest.HTTP(t, "remote", srv))
	c := memConv(t)
	m := &respondModels{replies: []plan.ModelResult{{Text: "one"}}}
	o := mcpTurn(m, servers, 20000, "remote")
	first, err := c.Turn(context.Background(), user("first"), o)
	if err != nil {
		t.Fatal(err)
	}
	srv.RemoveTools("fail", "echo")
	srv.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes its text back, now with a much longer description that costs more tokens than before.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "late", Description: "Added after the grant.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, err := servers.Tools(context.Background(), "remote")
		if err == nil && len(tools) == len(first.Receipt.MCP[0].Tools)+0 && !hasTool(tools, "fail") && hasTool(tools, "late") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's list change never arrived: %v %v", tools, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.reqs = nil
	second, err := c.Turn(context.Background(), user("second"), o)
	if err != nil {
		t.Fatal(err)
	}
	offered := toolNames(m.reqs[0])
	if strings.Contains(offered, "remote__fail") || strings.Contains(offered, "remote__late") || !strings.Contains(offered, "remote__echo") {
		t.Fatalf("offered after the change: %s", offered)
	}
	if !strings.Contains(fmt.Sprint(m.reqs[0].Tools), "now with a much longer description") {
		t.Fatalf("the changed definition was not sent")
	}
	a, b := first.Receipt.MCP[0], second.Receipt.MCP[0]
	if len(b.Tools) != len(a.Tools)-1 || b.DefinitionTokens == a.DefinitionTokens {
		t.Fatalf("first turn %d tools, %d tokens; second %d tools, %d tokens", len(a.Tools), a.DefinitionTokens, len(b.Tools), b.DefinitionTokens)
	}
}

func hasTool(tools []mcp.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// TestMCPCeiling: a server whose granted definitions exceed its ceiling
// fails the turn before any request, saying so; the user message stays
// stored with a failed receipt that shows the cost.
func TestMCPCeiling(t *testing.T) {
	srv := mcptest.Stdio("local")
	srv.MaxToolTokens = 30
	servers := mcpServers(t, srv)
	c := memConv(t)
	m := &respondModels{replies: []plan.ModelResult{{Text: "never"}}}
	_, err := c.Turn(context.Background(), user("hi"), mcpTurn(m, servers, 20000, "local"))
	var te *TurnError
	var ce *mcp.CeilingError
	if !errors.As(err, &te) || te.Kind != "context_budget_failed" || !errors.As(err, &ce) || ce.Server != "local" || ce.Limit != 30 {
		t.Fatalf("turn = %v", err)
	}
	if len(m.reqs) != 0 {
		t.Fatalf("%d requests sent", len(m.reqs))
	}
	if te.Receipt == nil || te.Receipt.Status != StatusFailed || len(te.Receipt.MCP) != 1 || te.Receipt.MCP[0].DefinitionTokens != ce.Tokens {
		t.Fatalf("failed receipt = %+v", te.Receipt)
	}
}

// TestMCPToolSpans: each MCP call of a traced turn is an execute_tool span
// naming the function, the call, the server and its tool.
func TestMCPToolSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	servers := mcpServers(t, mcptest.Stdio("local"))
	c := memConvWith(t, &Options{TracerProvider: tp})
	m := &respondModels{replies: []plan.ModelResult{calls([2]string{"local__echo", `{"text":"traced"}`}), {Text: "ok"}}}
	if _, err := c.Turn(context.Background(), user("trace it"), mcpTurn(m, servers, 20000, "local:echo")); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	for _, s := range rec.Ended() {
		if s.Name() != "execute_tool local__echo" {
			continue
		}
		got = map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.Emit()
		}
	}
	want := map[string]string{"gen_ai.tool.name": "local__echo", "gen_ai.tool.call.id": "m1", "mcp.method.name": "tools/call",
		"rlmpl.mcp.server": "local", "rlmpl.mcp.tool": "echo"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span attribute %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
