package plan

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestPromptGolden pins the planner prompt byte for byte. Run
// go test ./host/plan -run TestPromptGolden -update after an intended change
// and review the diff.
func TestPromptGolden(t *testing.T) {
	b := DefaultBudget()
	d := PromptData{
		Query: "How many lines mention the needle?",
		Metadata: handle.Metadata{Backend: "memory", Kind: "text", Bytes: 34, Items: 4, Version: 1,
			CreatedAt: time.Unix(1, 0), Operations: []handle.Op{handle.OpPeek, handle.OpSearch}},
		Capabilities:      MustCapabilities("context(peek)", "context(search)", "model(openrouter)", "rlm", "tool(count_items)"),
		ChildCapabilities: MustCapabilities("context(search)"),
		Tools:             []ToolSchema{{Name: "count_items", Description: "counts the elements of a list", Schema: `{"type":"array"}`}},
		Budget:            b,
		Instruction:       "Prefer a single search.",
	}
	for _, tc := range []struct {
		file string
		edit func(*PromptData)
	}{
		{"prompt_root.golden", func(*PromptData) {}},
		{"prompt_retry_child.golden", func(d *PromptData) {
			d.Depth = 1
			d.Tools = nil
			d.Feedback = "json parse error (line 1, column 31): invalid JSON: invalid character '}' looking for beginning of value"
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dd := d
			tc.edit(&dd)
			got := RenderPrompt(dd)
			if RenderPrompt(dd) != got {
				t.Fatal("RenderPrompt is not deterministic")
			}
			path := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("prompt differs from %s (run with -update and review the diff):\n%s", path, got)
			}
		})
	}
}

// TestPromptExamplesParse checks that the examples the prompt teaches are
// accepted by the parsers (a grammar the parser rejects would be a trap).
func TestPromptExamplesParse(t *testing.T) {
	term, err := ParseTerm(`plan([context(input(context), search("needle"), hits), final(var(hits))])`, TermsForTest)
	if err != nil {
		t.Fatal(err)
	}
	js, err := ParseJSON(grammar[len(grammar)-300:])
	if err != nil {
		t.Fatal(err)
	}
	if term.String() != js.String() {
		t.Fatalf("the two examples differ:\n%s\n%s", term, js)
	}
}
