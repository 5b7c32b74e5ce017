package store

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The OpenAI chat-messages wire shapes. Field order is fixed so that
// exported JSON is byte-stable.
type (
	jsonMessage struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name,omitempty"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
		ToolCalls  []jsonToolCall  `json:"tool_calls,omitempty"`
		Reasoning  string          `json:"reasoning,omitempty"`
	}
	jsonToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function jsonFunction `json:"function"`
	}
	jsonFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	jsonPart struct {
		Type     string         `json:"type"`
		Text     *string        `json:"text,omitempty"`
		ImageURL *jsonImagePart `json:"image_url,omitempty"`
		Alt      string         `json:"alt,omitempty"` // not OpenAI: the image's caption ([Part.Alt])
	}
	jsonImagePart struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	}
)

// MarshalJSON encodes m as an OpenAI chat message object. Text content is a
// JSON string, parts content an array of {"type":"text"} and
// {"type":"image_url"} objects (an image's caption, when it has one, as the
// part's "alt"); empty text on an assistant message with tool calls is
// encoded as null, as the API expects.
func (m Message) MarshalJSON() ([]byte, error) {
	jm := jsonMessage{
		Role:       m.Role.String(),
		Name:       m.Name,
		ToolCallID: m.ToolCallID,
		Reasoning:  m.Reasoning,
	}
	var err error
	switch {
	case m.Content.IsParts():
		parts := make([]jsonPart, len(m.Content.Parts))
		for i, p := range m.Content.Parts {
			switch p.Type {
			case PartText:
				t := p.Text
				parts[i] = jsonPart{Type: "text", Text: &t}
			case PartImageURL:
				parts[i] = jsonPart{Type: "image_url", ImageURL: &jsonImagePart{URL: p.URL, Detail: p.Detail}, Alt: p.Alt}
			default:
				return nil, invalid(fmt.Sprintf("content[%d].type", i), "unsupported content part type %v", p.Type)
			}
		}
		jm.Content, err = marshalNoEscape(parts)
	case m.Content.Text == "" && len(m.ToolCalls) > 0:
		jm.Content = json.RawMessage("null")
	default:
		jm.Content, err = marshalNoEscape(m.Content.Text)
	}
	if err != nil {
		return nil, err
	}
	for _, tc := range m.ToolCalls {
		jm.ToolCalls = append(jm.ToolCalls, jsonToolCall{ID: tc.ID, Type: "function",
			Function: jsonFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return marshalNoEscape(jm)
}

// UnmarshalJSON decodes an OpenAI chat message object. It checks shapes
// only; call [Message.Normalize] to validate. Unknown fields are ignored.
func (m *Message) UnmarshalJSON(data []byte) error {
	var jm jsonMessage
	if err := json.Unmarshal(data, &jm); err != nil {
		return invalid("", "not a chat message object: %v", err)
	}
	role, err := ParseRole(jm.Role)
	if err != nil {
		return err
	}
	out := Message{Role: role, Name: jm.Name, ToolCallID: jm.ToolCallID, Reasoning: jm.Reasoning}
	c := bytes.TrimSpace(jm.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
	case c[0] == '"':
		if err := json.Unmarshal(c, &out.Content.Text); err != nil {
			return invalid("content", "%v", err)
		}
	case c[0] == '[':
		var raw []jsonPart
		if err := json.Unmarshal(c, &raw); err != nil {
			return invalid("content", "%v", err)
		}
		out.Content.Parts = make([]Part, len(raw))
		for i, p := range raw {
			f := fmt.Sprintf("content[%d]", i)
			switch p.Type {
			case "text":
				if p.Text == nil {
					return invalid(f+".text", "missing")
				}
				out.Content.Parts[i] = TextPart(*p.Text)
			case "image_url":
				if p.ImageURL == nil {
					return invalid(f+".image_url", "missing")
				}
				out.Content.Parts[i] = CaptionedImagePart(p.ImageURL.URL, p.ImageURL.Detail, p.Alt)
			default:
				return invalid(f+".type", "unsupported content part type %q", p.Type)
			}
		}
	default:
		return invalid("content", "must be a string, an array of parts or null")
	}
	if jm.ToolCalls != nil {
		out.ToolCalls = make([]ToolCall, len(jm.ToolCalls))
		for i, tc := range jm.ToolCalls {
			if tc.Type != "" && tc.Type != "function" {
				return invalid(fmt.Sprintf("tool_calls[%d].type", i), "must be function (got %q)", tc.Type)
			}
			out.ToolCalls[i] = ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		}
	}
	*m = out
	return nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
