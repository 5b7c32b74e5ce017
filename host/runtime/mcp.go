package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
)

// MCPTools are the tools of MCP servers a turn offers: those its Grants
// allow (see mcp.Grant: what a grant allows is fixed when the servers
// first resolve it, so a server that adds tools later widens nothing).
// Each turn resolves them when it starts — a server's list comes from
// Servers' cache, listed again after the server said it changed — and
// grants tool(Name) for each one's function name (server__tool): a direct
// turn offers them as functions, charged in the pack's tool stage as the
// request renders them; a planner sees their schemas. Each server's
// definitions must fit its ceiling (mcp.Server.MaxToolTokens), or the turn
// fails with context_budget_failed and an *mcp.CeilingError, rather than
// leave some out. Calls reach only the tools offered; their failures
// (a timeout, a server that exited or sent garbage, a result marked as an
// error) go back to the model as tool errors.
type MCPTools struct {
	Servers *mcp.Servers
	Grants  []mcp.Grant
}

// ReceiptMCP is what a turn offered and called of one MCP server.
type ReceiptMCP struct {
	Server string `json:"server"`
	// Tools are the tools offered, by the server's names.
	Tools []string `json:"tools"`
	// DefinitionTokens are their definitions' tokens, as the request's
	// tool stage charges them; Method says whether that count is exact.
	DefinitionTokens int              `json:"definition_tokens"`
	Method           string           `json:"method"`
	Calls            []ReceiptMCPCall `json:"calls,omitempty"`
}

// ReceiptMCPCall is one call of an MCP tool.
type ReceiptMCPCall struct {
	Tool   string `json:"tool"`              // the server's name for it
	CallID string `json:"call_id,omitempty"` // the model's tool call (a direct turn's)
	Status string `json:"status"`            // ok, or error
	// Error is the failure's kind (mcp.Kind*: timeout, server_exited,
	// tool_error, ...) and Message what the model was told.
	Error   string  `json:"error,omitempty"`
	Message string  `json:"message,omitempty"`
	Bytes   int     `json:"result_bytes,omitempty"` // the result's text
	Images  int     `json:"images,omitempty"`
	MS      float64 `json:"ms"`
}

// offerMCP resolves the turn's MCP grants and adds their tools to in and
// deps: schemas, capabilities and the calls. Nothing is sent yet.
func (t *turn) offerMCP(ctx context.Context, in *plan.Input, deps *plan.Deps) error {
	m := t.opts.MCP
	set, err := m.Servers.Grant(ctx, m.Grants)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &TurnError{Kind: "completion_failed", Cause: err}
	}
	costs, err := set.Costs(t.counter)
	t.mu.Lock()
	for _, c := range costs {
		r := ReceiptMCP{Server: c.Server, DefinitionTokens: c.Tokens.Tokens, Method: c.Tokens.Method.String()}
		for _, tool := range c.Tools {
			r.Tools = append(r.Tools, tool.Name)
		}
		t.receipt.MCP = append(t.receipt.MCP, r)
	}
	t.mu.Unlock()
	if err != nil {
		return &TurnError{Kind: "context_budget_failed", Cause: err}
	}
	for _, tool := range set.Tools() {
		fn := tool.FunctionName()
		if slices.ContainsFunc(in.Tools, func(s plan.ToolSchema) bool { return s.Name == fn }) {
			return &TurnError{Kind: "completion_failed", Cause: fmt.Errorf("runtime: the tool %s is both the program's and MCP server %s's", fn, tool.Server)}
		}
		in.Tools = append(in.Tools, plan.ToolSchema{Name: fn, Description: tool.Description, Schema: string(tool.InputSchema)})
		in.Capabilities = append(in.Capabilities, plan.Capability{Kind: "tool", Name: fn})
	}
	deps.Tools = mcpCalls{t: t, set: set, inner: deps.Tools}
	return nil
}

// mcpCalls runs the turn's tool calls: those of the MCP toolset through
// it, the others through the caller's tools.
type mcpCalls struct {
	t     *turn
	set   *mcp.Toolset
	inner plan.Tools
}

func (m mcpCalls) Call(ctx context.Context, name string, args any) (any, error) {
	tool, ok := m.set.Lookup(name)
	if !ok {
		if m.inner == nil {
			return nil, fmt.Errorf("runtime: no tool %s", name)
		}
		return m.inner.Call(ctx, name, args)
	}
	if args == nil {
		args = map[string]any{}
	}
	if _, isObject := args.(map[string]any); !isObject {
		return nil, fmt.Errorf("the arguments of %s must be an object (got %s)", name, plan.Encode(args))
	}
	id := plan.ToolCallID(ctx)
	began := m.t.now()
	_, res, err := m.set.Call(ctx, name, json.RawMessage(plan.Encode(args)))
	if err == nil && res.IsError {
		err = &mcp.Error{Server: tool.Server, Tool: tool.Name, Kind: mcp.KindToolError, Message: res.Text}
	}
	call := ReceiptMCPCall{Tool: tool.Name, CallID: id, Status: "ok", MS: ms(m.t.now().Sub(began))}
	var me *mcp.Error
	switch {
	case errors.As(err, &me):
		call.Status, call.Error, call.Message = "error", me.Kind, me.Message
	case err != nil:
		call.Status, call.Error, call.Message = "error", "cancelled", err.Error()
	default:
		call.Bytes, call.Images = len(res.Text), len(res.Images)
	}
	m.t.noteMCPCall(tool.Server, call)
	if err != nil {
		return nil, err
	}
	if id != "" && len(res.Images) > 0 {
		m.t.keepImages(id, name, res.Images)
	}
	return res.Text, nil
}

// origin names the server and tool behind a function name, for spans.
func (m mcpCalls) origin(name string) (server, tool string, ok bool) {
	t, ok := m.set.Lookup(name)
	return t.Server, t.Name, ok
}

// noteMCPCall adds a call to the receipt, under its server.
func (t *turn) noteMCPCall(server string, call ReceiptMCPCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.receipt.MCP {
		if t.receipt.MCP[i].Server == server {
			t.receipt.MCP[i].Calls = append(t.receipt.MCP[i].Calls, call)
			return
		}
	}
}

// keepImages keeps a result's images for the tool message that answers
// the call id: stored with it, never sent (the model reads their line in
// the result's text).
func (t *turn) keepImages(id, fn string, images []mcp.Image) {
	parts := make([]store.Part, len(images))
	for i, im := range images {
		parts[i] = store.CaptionedImagePart(im.DataURL(), "", fmt.Sprintf("image %d of %s's result (%s)", i+1, fn, im.MIMEType))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.images == nil {
		t.images = map[string][]store.Part{}
	}
	t.images[id] = parts
}
