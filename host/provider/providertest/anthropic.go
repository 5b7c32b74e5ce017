package providertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Anthropic is a scripted Anthropic Messages server, an http.Handler to
// serve behind a [Server] (NewServer(a.ServeHTTP), or after handlers
// that fail first). It answers each POST /messages with the reply of
// Options.Reply, whole or as the API's event stream (stream:true), and
// does what the tests of caching and counting need the real one to do:
//
//   - it counts a request block by block, in the API's prefix order (the
//     tools, the system blocks, then each message's blocks): a block costs
//     Options.Count of its text (a text block's text, a tool call's name
//     and input, a tool result's content, a tool's name, description and
//     schema) plus 3, an image 1,600 plus 3;
//   - it caches like Anthropic: the prefix up to a block marked with
//     cache_control is written to the cache when it holds at least
//     Options.MinCacheTokens; a later request whose prefix up to one of
//     its own breakpoints is byte for byte a cached one reads it (the
//     longest such), and writes its later breakpoints. The usage says
//     input_tokens (neither read nor written), cache_read_input_tokens
//     and cache_creation_input_tokens (with the TTL split the API
//     reports). It does not look back 20 blocks before a breakpoint as
//     the real cache does: a hit needs a breakpoint where the cached
//     prefix ends, so what it serves, the real one serves too;
//   - it refuses a request whose prompt, or prompt plus max_tokens, is
//     over Options.Window, with the API's 400 invalid_request_error and
//     its message ("prompt is too long: N tokens > W maximum").
//
// It is safe for concurrent use.
type Anthropic struct {
	opts AnthropicOptions

	mu     sync.Mutex // protects the fields below
	calls  int
	cached map[[32]byte]bool
	usages []AnthropicUsage
}

// AnthropicOptions configure an [Anthropic] server.
type AnthropicOptions struct {
	// Reply answers call i (0-based, refused calls included) of a request
	// body (decoded JSON). Nil answers "ok".
	Reply func(call int, body map[string]any) AnthropicReply
	// Count counts a text's tokens. Nil counts 1 per 4 bytes, rounded up.
	Count func(text string) int
	// MinCacheTokens is the shortest prefix cached; 0 means 1,024 (the
	// API's minimum for Sonnet and Opus).
	MinCacheTokens int
	// Window is the context window: a prompt over it is refused, and so
	// is one whose max_tokens would take it over. 0 means no limit.
	Window int
}

// AnthropicReply is one scripted answer.
type AnthropicReply struct {
	Text     string
	Thinking string
	ToolUses []ToolUse
	// Stop is the stop reason: "" is tool_use when there are tool uses,
	// else end_turn.
	Stop string
	// OutputTokens is the usage's output; 0 means 7.
	OutputTokens int
}

// ToolUse is a tool_use block of an answer; Input is its JSON object.
type ToolUse struct {
	ID, Name, Input string
}

// AnthropicUsage is the usage of one answered request, as sent.
type AnthropicUsage struct {
	Input, CacheRead, CacheWrite, Output int
}

// Prompt is the prompt's tokens: input, read and written.
func (u AnthropicUsage) Prompt() int { return u.Input + u.CacheRead + u.CacheWrite }

// NewAnthropic returns a server of these options.
func NewAnthropic(opts AnthropicOptions) *Anthropic {
	if opts.Count == nil {
		opts.Count = func(s string) int { return (len(s) + 3) / 4 }
	}
	if opts.MinCacheTokens == 0 {
		opts.MinCacheTokens = 1024
	}
	return &Anthropic{opts: opts, cached: map[[32]byte]bool{}}
}

// Usages returns the usage of each request answered so far, in order.
func (a *Anthropic) Usages() []AnthropicUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]AnthropicUsage(nil), a.usages...)
}

// unit is one block of a request in prefix order.
type unit struct {
	key        []byte // what identifies it in a prefix: its JSON without cache_control
	tokens     int
	breakpoint string // its cache_control TTL ("5m" by default), "" when unmarked
}

func (a *Anthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		apiError(w, 400, "invalid_request_error", "invalid JSON: "+err.Error())
		return
	}
	a.mu.Lock()
	call := a.calls
	a.calls++
	a.mu.Unlock()
	units := a.units(body)
	total := 0
	for _, u := range units {
		total += u.tokens
	}
	maxTokens := 0
	if n, ok := body["max_tokens"].(float64); ok {
		maxTokens = int(n)
	}
	switch w0 := a.opts.Window; {
	case w0 > 0 && total > w0:
		apiError(w, 400, "invalid_request_error", fmt.Sprintf("prompt is too long: %d tokens > %d maximum", total, w0))
		return
	case w0 > 0 && total+maxTokens > w0:
		apiError(w, 400, "invalid_request_error", fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", total, maxTokens, w0))
		return
	}
	u, ttl := a.cache(units)
	reply := AnthropicReply{Text: "ok"}
	if a.opts.Reply != nil {
		reply = a.opts.Reply(call, body)
	}
	u.Output = reply.OutputTokens
	if u.Output == 0 {
		u.Output = 7
	}
	a.mu.Lock()
	a.usages = append(a.usages, u)
	a.mu.Unlock()
	model, _ := body["model"].(string)
	if stream, _ := body["stream"].(bool); stream {
		streamReply(w, call, model, reply, u, ttl)
		return
	}
	msg := message(call, model, reply, u, ttl)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(msg)
}

// units flattens a request into its blocks in prefix order.
func (a *Anthropic) units(body map[string]any) []unit {
	var out []unit
	add := func(block any, text string) {
		m, _ := block.(map[string]any)
		ttl := ""
		if cc, ok := m["cache_control"].(map[string]any); ok {
			ttl = "5m"
			if t, ok := cc["ttl"].(string); ok && t != "" {
				ttl = t
			}
			m = without(m, "cache_control")
		}
		key, _ := json.Marshal(m)
		n := 3 + a.opts.Count(text)
		if m["type"] == "image" {
			n = 3 + imageTokens
		}
		out = append(out, unit{key: key, tokens: n, breakpoint: ttl})
	}
	for _, t := range list(body["tools"]) {
		m, _ := t.(map[string]any)
		schema, _ := json.Marshal(m["input_schema"])
		add(t, str(m["name"])+" "+str(m["description"])+" "+string(schema))
	}
	switch s := body["system"].(type) {
	case string:
		add(map[string]any{"type": "text", "text": s}, s)
	case []any:
		for _, b := range s {
			add(b, str(b.(map[string]any)["text"]))
		}
	}
	for _, m := range list(body["messages"]) {
		msg, _ := m.(map[string]any)
		role := str(msg["role"])
		if s, ok := msg["content"].(string); ok {
			add(map[string]any{"role": role, "type": "text", "text": s}, s)
			continue
		}
		for i, b := range list(msg["content"]) {
			bm, _ := b.(map[string]any)
			if i == 0 {
				bm = with(bm, "role", role) // a turn's first block starts it
			}
			add(bm, blockText(bm))
		}
	}
	return out
}

// cache reads and writes the prefixes of the request's breakpoints and
// returns its usage (without output) and the TTL it wrote.
func (a *Anthropic) cache(units []unit) (AnthropicUsage, string) {
	h := sha256.New()
	var total, read, written, lastBP int
	type prefix struct {
		sum    [32]byte
		tokens int
		ttl    string
	}
	var bps []prefix
	for _, u := range units {
		h.Write([]byte(strconv.Itoa(len(u.key))))
		h.Write(u.key)
		total += u.tokens
		if u.breakpoint != "" {
			var sum [32]byte
			copy(sum[:], h.Sum(nil))
			bps = append(bps, prefix{sum, total, u.breakpoint})
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range bps {
		if a.cached[p.sum] {
			read = p.tokens
		}
	}
	ttl := ""
	for _, p := range bps {
		if p.tokens > read && p.tokens >= a.opts.MinCacheTokens {
			a.cached[p.sum] = true
			lastBP, ttl = p.tokens, p.ttl
		}
	}
	if lastBP > 0 {
		written = lastBP - read
	}
	return AnthropicUsage{Input: total - read - written, CacheRead: read, CacheWrite: written}, ttl
}

// usageJSON is the usage object the API sends.
func usageJSON(u AnthropicUsage, ttl string, output int) map[string]any {
	split := map[string]any{"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
	if u.CacheWrite > 0 {
		split["ephemeral_"+ttl+"_input_tokens"] = u.CacheWrite
	}
	return map[string]any{"input_tokens": u.Input, "cache_read_input_tokens": u.CacheRead,
		"cache_creation_input_tokens": u.CacheWrite, "cache_creation": split, "output_tokens": output}
}

// content is the reply's content blocks.
func (r AnthropicReply) content() []map[string]any {
	var out []map[string]any
	if r.Thinking != "" {
		out = append(out, map[string]any{"type": "thinking", "thinking": r.Thinking, "signature": "sig"})
	}
	if r.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": r.Text})
	}
	for _, t := range r.ToolUses {
		out = append(out, map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": json.RawMessage(t.Input)})
	}
	return out
}

func (r AnthropicReply) stop() string {
	switch {
	case r.Stop != "":
		return r.Stop
	case len(r.ToolUses) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func message(call int, model string, r AnthropicReply, u AnthropicUsage, ttl string) map[string]any {
	return map[string]any{"id": "msg_" + strconv.Itoa(call), "type": "message", "role": "assistant", "model": model,
		"content": r.content(), "stop_reason": r.stop(), "stop_sequence": nil, "usage": usageJSON(u, ttl, u.Output)}
}

// streamReply writes the reply as the API's event stream: text in two
// deltas, each tool's input in two input_json_delta fragments.
func streamReply(w http.ResponseWriter, call int, model string, r AnthropicReply, u AnthropicUsage, ttl string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		w.(http.Flusher).Flush()
	}
	start := message(call, model, AnthropicReply{}, u, ttl)
	start["content"], start["stop_reason"], start["usage"] = []any{}, nil, usageJSON(u, ttl, 1)
	send(map[string]any{"type": "message_start", "message": start})
	send(map[string]any{"type": "ping"})
	for i, b := range r.content() {
		var deltas []map[string]any
		switch b["type"] {
		case "thinking":
			deltas = []map[string]any{{"type": "thinking_delta", "thinking": b["thinking"]}, {"type": "signature_delta", "signature": "sig"}}
			b = map[string]any{"type": "thinking", "thinking": ""}
		case "text":
			t := b["text"].(string)
			deltas = []map[string]any{{"type": "text_delta", "text": t[:len(t)/2]}, {"type": "text_delta", "text": t[len(t)/2:]}}
			b = map[string]any{"type": "text", "text": ""}
		case "tool_use":
			in := string(b["input"].(json.RawMessage))
			deltas = []map[string]any{{"type": "input_json_delta", "partial_json": in[:len(in)/2]}, {"type": "input_json_delta", "partial_json": in[len(in)/2:]}}
			b = with(b, "input", map[string]any{})
		}
		send(map[string]any{"type": "content_block_start", "index": i, "content_block": b})
		for _, d := range deltas {
			send(map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		send(map[string]any{"type": "content_block_stop", "index": i})
	}
	send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": r.stop(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	send(map[string]any{"type": "message_stop"})
}

// AnthropicError answers with an error of the API's shape: status, its
// type (overloaded_error for 529, rate_limit_error, ...) and message.
func AnthropicError(status int, typ, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { apiError(w, status, typ, msg) }
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	w.Write(b)
}

// blockText is what a content block costs: its text, or a tool call's
// name and input, or a tool result's content.
func blockText(b map[string]any) string {
	switch b["type"] {
	case "text":
		return str(b["text"])
	case "tool_use":
		in, _ := json.Marshal(b["input"])
		return str(b["name"]) + " " + string(in)
	case "tool_result":
		if s, ok := b["content"].(string); ok {
			return s
		}
		var buf bytes.Buffer
		for _, c := range list(b["content"]) {
			buf.WriteString(blockText(c.(map[string]any)))
		}
		return buf.String()
	}
	return ""
}

// imageTokens is what an image costs: about the API's charge for a
// 1,092×1,092 one.
const imageTokens = 1600

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func with(m map[string]any, key string, v any) map[string]any {
	out := without(m, key)
	out[key] = v
	return out
}
