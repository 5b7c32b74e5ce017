package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Framing holds the chat-format overhead rules of a model: the OpenAI
// cookbook's num_tokens_from_messages (PerMessage, PerName, ReplyPriming)
// and num_tokens_for_tools (FuncInit … FuncEnd), plus rlmpl's PerToolCall.
type Framing struct {
	// PerMessage is charged for every message (<|start|>{role}<|message|>
	// … <|end|> minus the role's own tokens, which are counted).
	PerMessage int
	// PerName is charged for a message with a name, on top of the name's
	// tokens (-1 for gpt-3.5-turbo-0301, which drops the role then).
	PerName int
	// ReplyPriming is charged once per request (<|start|>assistant<|message|>).
	ReplyPriming int

	// Verified marks the three constants above as verified against the
	// provider for this exact model snapshot; only then are the message
	// framing and reply-priming stages labelled Exact.
	Verified bool

	// TrimContent: the template trims each message's text (Llama 3's
	// "| trim"), so content is counted trimmed.
	TrimContent bool
	// DropsNames: the template renders no name. A message with one is
	// still charged its name's tokens and PerName, conservatively, and its
	// framing is Estimated.
	DropsNames bool
	// SchemaFree: the server applies a json_schema response format as a
	// sampling grammar and shows none of it to the model (llama.cpp, vLLM,
	// Ollama), so it costs no prompt tokens, exactly. Otherwise the
	// schema's JSON text is charged, Estimated: OpenAI publishes no rule.
	SchemaFree bool
	// ToolsUnseen: the template renders no tool definition, tool call or
	// call id (Llama 3's), so they cost nothing, exactly — and the model
	// does not see them.
	ToolsUnseen bool

	// Tool-schema constants of num_tokens_for_tools: FuncInit per tool,
	// PropInit per tool with properties, PropKey per property, EnumInit per
	// property with an enum, EnumItem per enum value (plus its tokens),
	// FuncEnd once per request with tools. Tool stages are always
	// Estimated: the cookbook calls its rule an estimate.
	FuncInit, PropInit, PropKey, EnumInit, EnumItem, FuncEnd int

	// PerToolCall is charged per tool call in an assistant message, on top
	// of the tokens of the call's id, function name and arguments. The
	// cookbook publishes no rule for tool calls; this is rlmpl's
	// conservative one (the harmony rendering of a call,
	// "<|start|>assistant<|channel|>commentary to=functions.NAME
	// <|constrain|>json<|message|>ARGS<|call|>", has about 10 tokens of
	// overhead), and its stages are always Estimated.
	PerToolCall int

	// Images is the model's image rule, for image content parts. The zero
	// rule charges [DefaultImageMax] per image, Estimated. [Registry.Counter]
	// fills it from the model family's published rule unless the model
	// table's Framing sets one.
	Images ImageRule
}

const defaultPerToolCall = 10

// DefaultFraming returns the cookbook's framing for models of encoding:
// 3 per message, 1 per name, 3 for reply priming, and the tool constants
// of gpt-4o/gpt-4o-mini (FuncInit 7) for o200k encodings or of
// gpt-3.5-turbo/gpt-4 (FuncInit 10) for any other. Verified is false.
func DefaultFraming(encoding string) Framing {
	f := Framing{
		PerMessage: 3, PerName: 1, ReplyPriming: 3,
		FuncInit: 10, PropInit: 3, PropKey: 3, EnumInit: -3, EnumItem: 3, FuncEnd: 12,
		PerToolCall: defaultPerToolCall,
	}
	if encoding == O200kBase || encoding == O200kHarmony {
		f.FuncInit = 7
	}
	return f
}

// ChatFormat returns the framing of a chat template that is not OpenAI's,
// by name, for encodings registered with one (the chat_format option of
// token_register_encoding/4): "llama3" is Llama 3's template as llama.cpp
// applies it, each message <|start_header_id|>ROLE<|end_header_id|>\n\n
// + trim(content) + <|eot_id|> (4 tokens + the role's), one
// <|begin_of_text|> per request and the reply primed with
// <|start_header_id|>assistant<|end_header_id|>\n\n (4 tokens), no tool
// definition, call or call id rendered (a tool result is a message of
// role tool), verified against llama-server's usage.prompt_tokens. ok is false for an unknown
// name.
func ChatFormat(name string) (f Framing, ok bool) {
	switch name {
	case "llama3":
		f = DefaultFraming("") // the tool rules: estimates either way
		f.PerMessage, f.PerName, f.ReplyPriming = 4, 0, 1+4
		f.Verified, f.TrimContent, f.DropsNames, f.SchemaFree, f.ToolsUnseen = true, true, true, true, true
		return f, true
	}
	return Framing{}, false
}

// ChatFormats returns the names [ChatFormat] knows, sorted.
func ChatFormats() []string { return []string{"llama3"} }

// StageKind names a part of a rendered request.
type StageKind int

const (
	// StageContent is a message's content text.
	StageContent StageKind = iota + 1
	// StageFraming is a message's overhead: Framing.PerMessage, the role's
	// tokens, the name's tokens plus Framing.PerName, and the tokens of
	// tool_call_id (counted, conservatively, as the cookbook counts every
	// field).
	StageFraming
	// StageToolCalls is an assistant message's tool calls.
	StageToolCalls
	// StageTool is one tool definition of Request.Tools.
	StageTool
	// StageToolsEnd is the closing overhead of the tool block.
	StageToolsEnd
	// StageReplyPriming primes the assistant's reply (and holds any
	// once-per-request token, such as Llama 3's <|begin_of_text|>).
	StageReplyPriming
	// StageResponseFormat is the request's response_format (see
	// [Framing].SchemaFree).
	StageResponseFormat
)

// String returns the stage kind's name, e.g. "content".
func (k StageKind) String() string {
	switch k {
	case StageContent:
		return "content"
	case StageFraming:
		return "framing"
	case StageToolCalls:
		return "tool_calls"
	case StageTool:
		return "tool"
	case StageToolsEnd:
		return "tools_end"
	case StageReplyPriming:
		return "reply_priming"
	case StageResponseFormat:
		return "response_format"
	default:
		return fmt.Sprintf("StageKind(%d)", int(k))
	}
}

// Stage is one part of a [Breakdown].
type Stage struct {
	Kind StageKind
	// Index is the message index (content, framing, tool calls), the tool
	// index (tool), or -1.
	Index int
	Count Count
}

// Breakdown is the count of a rendered request: the stages in request
// order (per message: content, framing, tool calls; then each tool, the
// tool block's end, the reply priming) and their total. The stages'
// Tokens sum exactly to Total.Tokens, and Total is Exact only if every
// stage is.
type Breakdown struct {
	Total  Count
	Stages []Stage
}

// Messages is Message for each of the request's first n messages, in one
// pass over the stages.
func (b Breakdown) Messages(n int) []Count {
	out := make([]Count, n)
	for i := range out {
		out[i] = Count{Basis: BasisSum, Encoding: b.Total.Encoding}
	}
	for _, s := range b.Stages {
		if s.Index >= 0 && s.Index < n && (s.Kind == StageContent || s.Kind == StageFraming || s.Kind == StageToolCalls) {
			out[s.Index].add(s.Count)
		}
	}
	for i := range out {
		if out[i].Method == 0 {
			out[i].Method = Exact // nothing to count is exactly 0
		}
	}
	return out
}

// Message returns the sum of message i's stages.
func (b Breakdown) Message(i int) Count {
	c := Count{Basis: BasisSum, Encoding: b.Total.Encoding}
	for _, s := range b.Stages {
		if s.Index == i && (s.Kind == StageContent || s.Kind == StageFraming || s.Kind == StageToolCalls) {
			c.add(s.Count)
		}
	}
	if c.Method == 0 {
		c.Method = Exact // nothing to count is exactly 0
	}
	return c
}

// CountRequest counts req as the provider renders it, stage by stage. It
// reads req and keeps no reference to it. The caller owns the returned
// stages.
//
// Text (content, role, name, ids, arguments, schema text, and a signed
// reasoning, which is sent back) is counted with
// the counter's encoding — or with the estimator, for [Registry.Estimator]
// — and the overheads follow [Counter.Framing]. Which stages are Exact:
// content, when the counter has the model's encoding; framing and reply
// priming, when in addition the framing is Verified and the message has no
// tool_call_id; tool calls and tools, never.
func (c Counter) CountRequest(req *Request) Breakdown {
	return c.CountRequestCached(req, nil)
}

// CountRequestCached is [Counter.CountRequest] with message contents
// counted by the caller, so that stored history is not re-tokenized:
// cached(i) returns the count of message i's content (as recorded at
// append, for this counter's encoding) and true, or false to have it
// counted now. A cached count is used as given, label included; it is the
// caller's duty that it was made with the same encoding (Count.Encoding
// says which). A nil cached counts everything.
func (c Counter) CountRequestCached(req *Request, cached func(i int) (Count, bool)) Breakdown {
	f := c.Framing()
	var b Breakdown
	b.Stages = make([]Stage, 0, 2*len(req.Messages)+len(req.Tools)+2)
	fixed := func(n int, exact bool, basis string) Count {
		m := Estimated
		if exact {
			m = Exact
		}
		return Count{Tokens: n, Method: m, Basis: basis}
	}
	textExact := c.enc != nil
	roles := map[string]Count{} // a request has a handful of roles and many messages
	for i, m := range req.Messages {
		content, ok := Count{}, false
		if cached != nil {
			content, ok = cached(i)
		}
		if !ok {
			content = c.countContent(f, &m)
		}
		if m.ReasoningSignature != "" {
			content.add(c.Count(m.Reasoning)) // sent back with the message
		}
		b.Stages = append(b.Stages, Stage{StageContent, i, content})

		fr := fixed(f.PerMessage, textExact && f.Verified && (m.ToolCallID == "" || f.ToolsUnseen) && !(f.DropsNames && m.Name != ""), BasisMessageFraming)
		rc, seen := roles[m.Role]
		if !seen {
			rc = c.Count(m.Role)
			roles[m.Role] = rc
		}
		fr.add(rc)
		if m.Name != "" {
			fr.add(c.Count(m.Name))
			fr.Tokens += f.PerName
		}
		if m.ToolCallID != "" && !f.ToolsUnseen {
			fr.add(c.Count(m.ToolCallID))
		}
		fr.Basis, fr.Encoding = BasisMessageFraming, c.encodingName()
		b.Stages = append(b.Stages, Stage{StageFraming, i, fr})

		if len(m.ToolCalls) > 0 {
			tc := fixed(0, textExact && f.ToolsUnseen, BasisToolCalls)
			for _, call := range m.ToolCalls {
				if !f.ToolsUnseen {
					tc.Tokens += f.PerToolCall
					tc.add(c.Count(call.ID))
					tc.add(c.Count(call.Function.Name))
					tc.add(c.Count(call.Function.Arguments))
				}
			}
			tc.Encoding = c.encodingName()
			b.Stages = append(b.Stages, Stage{StageToolCalls, i, tc})
		}
	}
	for i, t := range req.Tools {
		n := fixed(0, textExact, BasisToolSchemas)
		if !f.ToolsUnseen {
			n = c.countTool(f, t)
		}
		b.Stages = append(b.Stages, Stage{StageTool, i, n})
	}
	if len(req.Tools) > 0 {
		end := fixed(f.FuncEnd, false, BasisToolSchemas)
		if f.ToolsUnseen {
			end = fixed(0, textExact, BasisToolSchemas)
		}
		b.Stages = append(b.Stages, Stage{StageToolsEnd, -1, end})
	}
	b.Stages = append(b.Stages, Stage{StageReplyPriming, -1,
		fixed(f.ReplyPriming, textExact && f.Verified, BasisReplyPriming)})
	if rf := req.ResponseFormat; rf != nil {
		n := fixed(0, textExact && f.SchemaFree, BasisResponseFormat)
		if !f.SchemaFree {
			js, _ := json.Marshal(rf)
			n.add(c.Count(string(js)))
			n.Method, n.Basis, n.Encoding = Estimated, BasisResponseFormat, c.encodingName()
		}
		b.Stages = append(b.Stages, Stage{StageResponseFormat, -1, n})
	}

	b.Total = Count{Basis: BasisSum, Encoding: c.encodingName()}
	for _, s := range b.Stages {
		b.Total.add(s.Count)
	}
	return b
}

// countContent counts a message's content: its text, or its parts one by
// one. A text part is counted as text; an image part by [Framing].Images;
// and two adjacent text parts are charged one more token, Estimated,
// because providers do not publish how they join text parts (an image
// costs no joint: OpenAI's billing of a text part and an image is their
// sum).
func (c Counter) countContent(f Framing, m *Message) Count {
	if len(m.Parts) == 0 {
		if f.TrimContent {
			return c.Count(strings.TrimSpace(m.Content))
		}
		return c.Count(m.Content)
	}
	n := Count{Method: Exact}
	for i, p := range m.Parts {
		if p.Type == PartImageURL {
			n.add(f.Images.count(p.Detail))
			continue
		}
		if i > 0 && m.Parts[i-1].Type != PartImageURL {
			n.add(Count{Tokens: 1, Method: Estimated})
		}
		n.add(c.Count(p.Text))
	}
	n.Basis, n.Encoding = BasisParts, c.encodingName()
	return n
}

// countTool is num_tokens_for_tools for one function:
//
//	FuncInit + tokens(name + ":" + description)
//	+ (PropInit + Σ per property (PropKey + tokens(key:type:description)
//	   + enum? (EnumInit + Σ (EnumItem + tokens(item))))   if any properties
//
// with a trailing "." dropped from descriptions. rlmpl extends it,
// conservatively, to nested schemas: an object property's own properties,
// and those of an array's items, are charged by the same rule. A missing
// description or type counts as "". Its result is Estimated.
func (c Counter) countTool(f Framing, t Tool) Count {
	n := Count{Tokens: f.FuncInit, Method: Estimated}
	n.add(c.Count(t.Function.Name + ":" + strings.TrimSuffix(t.Function.Description, ".")))
	var schema jsonSchema
	if len(t.Function.Parameters) > 0 {
		// A malformed schema is charged as having no properties: the
		// provider would reject the request before counting anything.
		_ = json.Unmarshal(t.Function.Parameters, &schema)
	}
	c.countProperties(f, &n, schema.Properties)
	n.Basis, n.Encoding = BasisToolSchemas, c.encodingName()
	return n
}

func (c Counter) countProperties(f Framing, n *Count, props map[string]jsonSchema) {
	if len(props) == 0 {
		return
	}
	n.Tokens += f.PropInit
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the sum does not depend on order; determinism of work does
	for _, k := range keys {
		p := props[k]
		n.Tokens += f.PropKey
		if len(p.Enum) > 0 {
			n.Tokens += f.EnumInit
			for _, item := range p.Enum {
				n.Tokens += f.EnumItem
				n.add(c.Count(jsonText(item)))
			}
		}
		n.add(c.Count(k + ":" + p.typeText() + ":" + strings.TrimSuffix(p.Description, ".")))
		c.countProperties(f, n, p.Properties)
		if p.Items != nil {
			c.countProperties(f, n, p.Items.Properties)
		}
	}
}

// jsonSchema is the part of a JSON Schema the tool rule reads.
type jsonSchema struct {
	Type        json.RawMessage       `json:"type"`
	Description string                `json:"description"`
	Enum        []json.RawMessage     `json:"enum"`
	Properties  map[string]jsonSchema `json:"properties"`
	Items       *jsonSchema           `json:"items"`
}

// typeText renders "type": a string as is, a list of types joined by ",".
func (s jsonSchema) typeText() string {
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(s.Type, &many) == nil {
		return strings.Join(many, ",")
	}
	return ""
}

// jsonText renders an enum value: a string as is, anything else as JSON.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
