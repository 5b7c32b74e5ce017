package plan

import (
	"strings"
	"testing"
)

// TestAnswerScanner: a direct answer's text comes out decoded, whatever
// the chunks are (every split point is tried, escapes and multi-byte
// characters cut included); any other plan passes nothing on.
func TestAnswerScanner(t *testing.T) {
	for _, tc := range []struct {
		name, answer, want string
	}{
		{"json", `{"steps":[{"op":"final","value":"Hello, world."}]}`, "Hello, world."},
		{"json escapes", "```json\n{ \"steps\": [ { \"op\": \"final\", \"value\": \"a\\\"b\\\\c\\nd \\u00e9\\ud83d\\ude00 ü\" } ] }\n```", "a\"b\\c\nd é😀 ü"},
		{"term", `plan([final(literal("It's 4.2 \"units\"."))])`, `It's 4.2 "units".`},
		{"term escapes", `Here: plan([ final( literal("x\ty""z\x41\\n\
end") ) ])`, "x\ty\"zA\nend"},
		{"json steps before final", `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"peek","selector":"metadata"},"bind":"m"},{"op":"final","value":"no"}]}`, ""},
		{"json nested final", `{"steps":[{"op":"rlm","plan":{"steps":[{"op":"final","value":"inner"}]},"bind":"r"},{"op":"final","value":{"ref":"var","name":"r"}}]}`, ""},
		{"term computed", `plan([context(input(context), search("x"), h), final(var(h))])`, ""},
		{"json computed", `{"steps":[{"op":"final","value":{"ref":"var","name":"x"}}]}`, ""},
		{"prose only", `I cannot answer that.`, ""},
	} {
		for split := 0; split <= len(tc.answer); split++ {
			for _, size := range []int{1, 3, len(tc.answer) + 1} {
				var got strings.Builder
				s := NewAnswerScanner(func(text string) { got.WriteString(text) })
				s.Write(tc.answer[:split])
				for rest := tc.answer[split:]; rest != ""; {
					n := min(size, len(rest))
					s.Write(rest[:n])
					rest = rest[n:]
				}
				if got.String() != tc.want {
					t.Fatalf("%s split at %d in chunks of %d: %q, want %q", tc.name, split, size, got.String(), tc.want)
				}
			}
		}
	}
}
