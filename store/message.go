package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Role is the author of a message. The zero value is invalid.
type Role uint8

// The four roles of the OpenAI chat format. Their numeric values are part of
// the record format and must not change.
const (
	RoleSystem Role = iota + 1
	RoleUser
	RoleAssistant
	RoleTool
)

// numRoles is one past the largest valid Role.
const numRoles = 5

var roleNames = [numRoles]string{"", "system", "user", "assistant", "tool"}

// String returns the role's wire name ("system", "user", "assistant",
// "tool"), or "role(N)" for an invalid value.
func (r Role) String() string {
	if r.Valid() {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return r >= RoleSystem && r <= RoleTool }

// ParseRole returns the Role named s. It returns an error wrapping
// [ErrInvalid] for any other name.
func ParseRole(s string) (Role, error) {
	for r := RoleSystem; r <= RoleTool; r++ {
		if roleNames[r] == s {
			return r, nil
		}
	}
	return 0, invalid("role", "must be system, user, assistant or tool (got %q)", s)
}

// PartType is the kind of a content [Part].
type PartType uint8

// Content part kinds. Their numeric values are part of the record format.
const (
	PartText PartType = iota + 1
	PartImageURL
)

// String returns the OpenAI type name of the part ("text", "image_url").
func (t PartType) String() string {
	switch t {
	case PartText:
		return "text"
	case PartImageURL:
		return "image_url"
	}
	return fmt.Sprintf("part_type(%d)", uint8(t))
}

// Part is one element of multi-part content: text(T) or
// image_url(URL[, Detail]).
type Part struct {
	Type   PartType
	Text   string // for PartText
	URL    string // for PartImageURL: http, https or data: (Normalize refuses others)
	Detail string // for PartImageURL: "auto", "low" or "high"; empty normalizes to "auto"
	// Alt is an image part's caption or alt text ("a photo of a sunset
	// over the harbour"), optional. A provider never sees it (the model
	// sees the image); search does, so an image can be found by what it
	// shows.
	Alt string
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// ImagePart returns an image_url part; detail may be empty (auto).
func ImagePart(url, detail string) Part { return Part{Type: PartImageURL, URL: url, Detail: detail} }

// CaptionedImagePart returns an image_url part with its caption or alt
// text ([Part.Alt]).
func CaptionedImagePart(url, detail, alt string) Part {
	return Part{Type: PartImageURL, URL: url, Detail: detail, Alt: alt}
}

// Content is a message body: plain text, or a list of parts when Parts is
// non-nil (an empty non-nil slice is an empty part list, distinct from "").
type Content struct {
	Text  string
	Parts []Part
}

// TextContent returns plain-text content.
func TextContent(text string) Content { return Content{Text: text} }

// PartsContent returns multi-part content (never nil Parts).
func PartsContent(parts ...Part) Content {
	if parts == nil {
		parts = []Part{}
	}
	return Content{Parts: parts}
}

// IsParts reports whether c is in the parts form.
func (c Content) IsParts() bool { return c.Parts != nil }

// PlainText returns the message text: the text itself, or the text parts
// joined by "\n" (image parts contribute nothing; their [Part.Alt] is
// searched as a field of its own).
func (c Content) PlainText() string {
	if !c.IsParts() {
		return c.Text
	}
	var b strings.Builder
	n := 0
	for _, p := range c.Parts {
		if p.Type != PartText {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
		n++
	}
	return b.String()
}

// ToolCall is one function call requested by an assistant message.
type ToolCall struct {
	ID        string
	Name      string // function name
	Arguments string // JSON text; empty normalizes to "{}"
}

// Message is a chat message in the normalized shape of the OpenAI chat
// format (upstream message_normalize/2).
type Message struct {
	Role       Role
	Content    Content
	Name       string     // optional author name
	ToolCallID string     // tool messages only: the call this answers
	ToolCalls  []ToolCall // assistant messages only
	Reasoning  string     // optional reasoning text (assistant)
}

// maxIDLen bounds identifiers (conversation ids, tool call ids, keys).
const maxIDLen = 1024

// Normalize returns m with defaults filled in (image detail "auto", tool
// call arguments "{}") after validating it. Errors are *[ValidationError]
// values naming the field and wrapping [ErrInvalid]. The returned message
// shares no slices with m.
func (m Message) Normalize() (Message, error) {
	if !m.Role.Valid() {
		return Message{}, invalid("role", "must be system, user, assistant or tool (got %v)", m.Role)
	}
	out := m
	if m.Content.IsParts() {
		out.Content.Parts = make([]Part, len(m.Content.Parts))
		if m.Content.Text != "" {
			return Message{}, invalid("content", "has both text and parts")
		}
		for i, p := range m.Content.Parts {
			f := fmt.Sprintf("content[%d]", i)
			switch p.Type {
			case PartText:
				if p.URL != "" || p.Detail != "" || p.Alt != "" {
					return Message{}, invalid(f, "text part carries image_url fields")
				}
				if !utf8.ValidString(p.Text) {
					return Message{}, invalid(f+".text", "not valid UTF-8")
				}
			case PartImageURL:
				if p.Text != "" {
					return Message{}, invalid(f, "image_url part carries text")
				}
				if p.URL == "" {
					return Message{}, invalid(f+".image_url.url", "must not be empty")
				}
				if !utf8.ValidString(p.URL) {
					return Message{}, invalid(f+".image_url.url", "not valid UTF-8")
				}
				if !utf8.ValidString(p.Alt) {
					return Message{}, invalid(f+".alt", "not valid UTF-8")
				}
				switch p.Detail {
				case "":
					p.Detail = "auto"
				case "auto", "low", "high":
				default:
					return Message{}, invalid(f+".image_url.detail", "must be auto, low or high (got %q)", p.Detail)
				}
				if !imageURLScheme(p.URL) {
					return Message{}, invalid(f+".image_url.url", "must be an http, https or data: URL")
				}
			default:
				return Message{}, invalid(f+".type", "unsupported content part type %v", p.Type)
			}
			out.Content.Parts[i] = p
		}
	} else if !utf8.ValidString(m.Content.Text) {
		return Message{}, invalid("content", "not valid UTF-8")
	}
	if !utf8.ValidString(m.Name) {
		return Message{}, invalid("name", "not valid UTF-8")
	}
	if !utf8.ValidString(m.Reasoning) {
		return Message{}, invalid("reasoning", "not valid UTF-8")
	}
	if m.ToolCallID != "" {
		if m.Role != RoleTool {
			return Message{}, invalid("tool_call_id", "only tool messages answer a tool call (role is %v)", m.Role)
		}
		if err := checkID("tool_call_id", m.ToolCallID); err != nil {
			return Message{}, err
		}
	}
	if m.ToolCalls != nil {
		if m.Role != RoleAssistant {
			return Message{}, invalid("tool_calls", "only assistant messages call tools (role is %v)", m.Role)
		}
		out.ToolCalls = make([]ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			f := fmt.Sprintf("tool_calls[%d]", i)
			if err := checkID(f+".id", tc.ID); err != nil {
				return Message{}, err
			}
			if tc.Name == "" {
				return Message{}, invalid(f+".function.name", "must not be empty")
			}
			if !utf8.ValidString(tc.Name) {
				return Message{}, invalid(f+".function.name", "not valid UTF-8")
			}
			if tc.Arguments == "" {
				tc.Arguments = "{}"
			}
			if !json.Valid([]byte(tc.Arguments)) {
				return Message{}, invalid(f+".function.arguments", "not valid JSON")
			}
			out.ToolCalls[i] = tc
		}
	}
	return out, nil
}

// Validate reports whether m is well formed; see [Message.Normalize].
func (m Message) Validate() error {
	_, err := m.Normalize()
	return err
}

// checkID checks an identifier (a conversation id, session, key, ...),
// the same way for every backend. NUL is refused because PostgreSQL's text
// cannot hold it; U+FFFD because it is what an unpaired UTF-16 surrogate
// becomes on its way in (Prolog's atom_codes/2, JSON's \ud800), so two
// different ids would name one conversation.
func checkID(field, id string) error {
	switch {
	case id == "":
		return invalid(field, "must not be empty")
	case len(id) > maxIDLen:
		return invalid(field, "longer than %d bytes", maxIDLen)
	case !utf8.ValidString(id):
		return invalid(field, "not valid UTF-8")
	case strings.ContainsRune(id, 0):
		return invalid(field, "must not contain NUL")
	case strings.ContainsRune(id, utf8.RuneError):
		return invalid(field, "must not contain U+FFFD (what an unpaired surrogate becomes: two ids would collide)")
	}
	return nil
}

// imageURLScheme reports whether url is one a model provider fetches or
// decodes (http, https, data:); anything else (javascript:, file:) is
// refused before it is stored and replayed into every later request.
func imageURLScheme(url string) bool {
	u := strings.ToLower(url)
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "data:")
}
