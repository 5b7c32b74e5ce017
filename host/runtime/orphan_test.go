package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/store"
)

const orphanJSONL = `{"role":"user","content":"look it up"}
{"role":"tool","tool_call_id":"call_gone","content":"42"}
{"role":"assistant","content":"it is 42"}
`

// TestOrphanToolResultsAreRefused: append and import refuse a tool result
// that answers no call before it, and write nothing.
func TestOrphanToolResultsAreRefused(t *testing.T) {
	call := store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}}
	c := memConv(t, user("ask"), call)
	for _, id := range []string{"c2", ""} {
		if _, err := c.Append(store.Message{Role: store.RoleTool, ToolCallID: id, Content: store.TextContent("x")}, AppendOptions{}); !errors.Is(err, ErrOrphanToolResult) {
			t.Errorf("Append(tool %q) = %v, want ErrOrphanToolResult", id, err)
		}
	}
	if _, err := c.Append(store.Message{Role: store.RoleTool, ToolCallID: "c1", Content: store.TextContent("x")}, AppendOptions{}); err != nil {
		t.Fatalf("the answer to c1: %v", err)
	}
	res, err := c.Import(strings.NewReader(orphanJSONL), ImportOptions{})
	if !errors.Is(err, ErrOrphanToolResult) || !strings.Contains(err.Error(), "line 2") || res.Imported != 0 {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	if st, _ := c.Stats(); st.Messages != 3 {
		t.Fatalf("%d messages stored, want 3 (nothing written by the refused calls)", st.Messages)
	}
}

// TestOrphanHistoryStaysUsable: a transcript that holds an orphan (a
// lenient import) packs without it, says so, and a turn succeeds.
func TestOrphanHistoryStaysUsable(t *testing.T) {
	c := memConv(t)
	if res, err := c.Import(strings.NewReader(orphanJSONL), ImportOptions{Lenient: true}); err != nil || res.Imported != 3 {
		t.Fatalf("lenient Import = %+v, %v", res, err)
	}
	want := []pack.LeftOut{{Seq: 2, Reason: pack.ReasonOrphanToolResult}}
	cp, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(10000, 12, 0), Utilities: testUtilities})
	if err != nil || !slices.Equal(cp.Boundary.LeftOut, want) {
		t.Fatalf("pack left out %v: %v", cp.Boundary.LeftOut, err)
	}
	p := &planner{answers: []string{final("fine")}}
	res, err := c.Turn(context.Background(), user("and now?"), turnOpts(p, handle.New(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Receipt(res.TurnID); err != nil || !slices.Equal(r.Context.Boundary.LeftOut, want) {
		t.Fatalf("receipt boundary %+v: %v", r.Context.Boundary, err)
	}
}
