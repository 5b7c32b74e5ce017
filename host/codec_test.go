package host

import (
	"context"
	"reflect"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// FuzzMessageCodec: every message the store accepts reads back from its
// term unchanged, so a message a program gets from the store is one it
// can append again (a copy, a replay, an import) without loss.
func FuzzMessageCodec(f *testing.F) {
	f.Add(uint8(1), "hello", "", "", "", "", "", "", false, "", "", "")
	f.Add(uint8(2), "", "bot", "", "call_1", "search", `{"q":"x"}`, "thinking", false, "", "", "")
	f.Add(uint8(3), "42", "", "call_1", "", "", "", "", false, "", "", "")
	f.Add(uint8(1), "see", "", "", "", "", "", "", true, "https://example.com/a.png", "low", "a sunset")
	f.Add(uint8(0), "[]", "'quoted'", "", "", "", "", "", false, "", "", "")
	f.Fuzz(func(t *testing.T, role uint8, text, name, toolCallID, callID, callName, callArgs, reasoning string, parts bool, url, detail, alt string) {
		m := store.Message{Role: store.Role(role % 5), Name: name, ToolCallID: toolCallID, Reasoning: reasoning}
		if parts {
			m.Content = store.PartsContent(store.TextPart(text), store.CaptionedImagePart(url, detail, alt))
		} else {
			m.Content = store.TextContent(text)
		}
		if callID != "" || callName != "" || callArgs != "" {
			m.ToolCalls = []store.ToolCall{{ID: callID, Name: callName, Arguments: callArgs}}
		}
		want, err := m.Normalize()
		if err != nil {
			return // the store refuses it: no term is ever made of it
		}
		c := &prolog.Call{Ctx: context.Background()}
		got, err := messageOf(c, messageTerm(want))
		if err != nil {
			t.Fatalf("messageOf(messageTerm(%+v)): %v", want, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip changed the message:\n got %+v\nwant %+v", got, want)
		}
	})
}
