package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The OpenAI cookbook's "How to count tokens with tiktoken", section 6
// (num_tokens_from_messages) and section 7 (num_tokens_for_tools), with the
// API's prompt_tokens it reports: 129 for gpt-3.5-turbo-0125 and
// gpt-4-0613, 124 for gpt-4o-2024-08-06 and gpt-4o-mini-2024-07-18; with
// tools, 105 and 101.
var cookbookMessages = []Message{
	{Role: "system", Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
	{Role: "system", Name: "example_user", Content: "New synergies will help drive top-line growth."},
	{Role: "system", Name: "example_assistant", Content: "Things working well together will increase revenue."},
	{Role: "system", Name: "example_user", Content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
	{Role: "system", Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
	{Role: "user", Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
}

const cookbookToolsJSON = `{
  "messages": [
    {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
    {"role": "user", "content": "What's the weather like in San Francisco?"}
  ],
  "tools": [{
    "type": "function",
    "function": {
      "name": "get_current_weather",
      "description": "Get the current weather in a given location",
      "parameters": {
        "type": "object",
        "properties": {
          "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
          "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}
        },
        "required": ["location"]
      }
    }
  }]
}`

func cookbookToolsRequest(testing.TB) *Request {
	var req Request
	if err := json.Unmarshal([]byte(cookbookToolsJSON), &req); err != nil {
		panic(err) // a constant
	}
	return &req
}

func TestCookbookMessages(t *testing.T) {
	r := newTestRegistry(t)
	for _, tc := range []struct {
		model string
		want  int
	}{
		{"gpt-3.5-turbo-0125", 129},
		{"gpt-4-0613", 129},
		{"gpt-4o-2024-08-06", 124},
		{"gpt-4o-mini-2024-07-18", 124},
	} {
		t.Run(tc.model, func(t *testing.T) {
			c, err := r.Counter(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			b := c.CountRequest(&Request{Messages: cookbookMessages})
			if b.Total.Tokens != tc.want {
				t.Errorf("CountRequest total = %d, want %d (cookbook and API)", b.Total.Tokens, tc.want)
			}
			// A verified snapshot with plain messages is exact end to end.
			if b.Total.Method != Exact {
				t.Errorf("Total.Method = %v, want exact (verified snapshot)", b.Total.Method)
			}
			checkStagesSum(t, b)
		})
	}
}

func TestCookbookTools(t *testing.T) {
	r := newTestRegistry(t)
	req := cookbookToolsRequest(t)
	for _, tc := range []struct {
		model          string
		want, messages int
	}{
		{"gpt-3.5-turbo-0125", 105, 0},
		{"gpt-4-0613", 105, 0},
		{"gpt-4o-2024-08-06", 101, 33}, // 33 for the messages + 68 for the tools
		{"gpt-4o-mini-2024-07-18", 101, 33},
	} {
		t.Run(tc.model, func(t *testing.T) {
			c, err := r.Counter(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			b := c.CountRequest(req)
			if b.Total.Tokens != tc.want {
				t.Errorf("CountRequest total = %d, want %d (cookbook and API)", b.Total.Tokens, tc.want)
			}
			if b.Total.Method != Estimated {
				t.Errorf("Total.Method = %v, want estimated (tool schemas are a heuristic)", b.Total.Method)
			}
			msgs := 0
			for _, s := range b.Stages {
				switch s.Kind {
				case StageTool, StageToolsEnd:
					if s.Count.Method != Estimated || s.Count.Basis != BasisToolSchemas {
						t.Errorf("stage %v = %v, want estimated %s", s.Kind, s.Count, BasisToolSchemas)
					}
				default:
					msgs += s.Count.Tokens
					if s.Count.Method != Exact {
						t.Errorf("stage %v[%d] = %v, want exact", s.Kind, s.Index, s.Count)
					}
				}
			}
			if tc.messages != 0 && msgs != tc.messages {
				t.Errorf("message stages = %d, want %d", msgs, tc.messages)
			}
			checkStagesSum(t, b)
		})
	}
}

func checkStagesSum(t *testing.T, b Breakdown) {
	t.Helper()
	sum, exact := 0, true
	for _, s := range b.Stages {
		sum += s.Count.Tokens
		exact = exact && s.Count.Method == Exact
	}
	if sum != b.Total.Tokens {
		t.Errorf("stages sum to %d, Total.Tokens = %d", sum, b.Total.Tokens)
	}
	if exact != (b.Total.Method == Exact) {
		t.Errorf("Total.Method = %v, but all stages exact = %v", b.Total.Method, exact)
	}
}

// TestRequestLabels checks which stages are exact and which estimated.
func TestRequestLabels(t *testing.T) {
	r := newTestRegistry(t)
	req := &Request{
		Messages: []Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Weather in Paris?", Name: "ann"},
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function",
				Function: FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
			{Role: "tool", ToolCallID: "call_1", Content: `{"temp_c":12}`},
		},
		Tools: cookbookToolsRequest(t).Tools,
	}
	type label struct {
		kind  StageKind
		index int
		m     Method
	}
	for _, tc := range []struct {
		name string
		c    func() Counter
		want []label
	}{
		{"verified snapshot", func() Counter { c, _ := r.Counter("gpt-4o-2024-08-06"); return c }, []label{
			{StageContent, 0, Exact}, {StageFraming, 0, Exact},
			{StageContent, 1, Exact}, {StageFraming, 1, Exact},
			{StageContent, 2, Exact}, {StageFraming, 2, Exact}, {StageToolCalls, 2, Estimated},
			{StageContent, 3, Exact}, {StageFraming, 3, Estimated}, // tool_call_id: not verified
			{StageTool, 0, Estimated}, {StageToolsEnd, -1, Estimated}, {StageReplyPriming, -1, Exact},
		}},
		{"alias", func() Counter { c, _ := r.Counter("gpt-4o"); return c }, []label{
			{StageContent, 0, Exact}, {StageFraming, 0, Estimated},
			{StageContent, 1, Exact}, {StageFraming, 1, Estimated},
			{StageContent, 2, Exact}, {StageFraming, 2, Estimated}, {StageToolCalls, 2, Estimated},
			{StageContent, 3, Exact}, {StageFraming, 3, Estimated},
			{StageTool, 0, Estimated}, {StageToolsEnd, -1, Estimated}, {StageReplyPriming, -1, Estimated},
		}},
		{"estimator", r.Estimator, []label{
			{StageContent, 0, Estimated}, {StageFraming, 0, Estimated},
			{StageContent, 1, Estimated}, {StageFraming, 1, Estimated},
			{StageContent, 2, Estimated}, {StageFraming, 2, Estimated}, {StageToolCalls, 2, Estimated},
			{StageContent, 3, Estimated}, {StageFraming, 3, Estimated},
			{StageTool, 0, Estimated}, {StageToolsEnd, -1, Estimated}, {StageReplyPriming, -1, Estimated},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.c().CountRequest(req)
			checkStagesSum(t, b)
			if len(b.Stages) != len(tc.want) {
				t.Fatalf("%d stages, want %d: %v", len(b.Stages), len(tc.want), b.Stages)
			}
			for i, s := range b.Stages {
				if w := tc.want[i]; s.Kind != w.kind || s.Index != w.index || s.Count.Method != w.m {
					t.Errorf("stage %d = %v[%d] %v, want %v[%d] %v", i, s.Kind, s.Index, s.Count.Method, w.kind, w.index, w.m)
				}
			}
			msgSum := 0
			for i := range req.Messages {
				msgSum += b.Message(i).Tokens
			}
			for _, s := range b.Stages {
				if s.Kind == StageTool || s.Kind == StageToolsEnd || s.Kind == StageReplyPriming {
					msgSum += s.Count.Tokens
				}
			}
			if msgSum != b.Total.Tokens {
				t.Errorf("Σ Message(i) + tools + priming = %d, want %d", msgSum, b.Total.Tokens)
			}
		})
	}
}

// TestToolCallRule pins rlmpl's tool-call rule: PerToolCall + tokens of id,
// name and arguments.
func TestToolCallRule(t *testing.T) {
	r := newTestRegistry(t)
	c, _ := r.Counter("gpt-4o")
	o, _ := r.Encoding(O200kBase)
	call := ToolCall{ID: "call_abc", Function: FunctionCall{Name: "lookup", Arguments: `{"q":"tiktoken"}`}}
	b := c.CountRequest(&Request{Messages: []Message{{Role: "assistant", ToolCalls: []ToolCall{call, call}}}})
	want := 2 * (defaultPerToolCall + o.Count(call.ID) + o.Count(call.Function.Name) + o.Count(call.Function.Arguments))
	for _, s := range b.Stages {
		if s.Kind == StageToolCalls && s.Count.Tokens != want {
			t.Errorf("tool calls = %d, want %d", s.Count.Tokens, want)
		}
	}
}

// TestNestedSchema checks that nested properties are charged (rlmpl's
// extension) and that a malformed schema does not fail the count.
func TestNestedSchema(t *testing.T) {
	r := newTestRegistry(t)
	c, _ := r.Counter("gpt-4o")
	flat := Tool{Function: FunctionDef{Name: "f", Description: "d", Parameters: json.RawMessage(
		`{"type":"object","properties":{"a":{"type":"object","description":"x"}}}`)}}
	nested := Tool{Function: FunctionDef{Name: "f", Description: "d", Parameters: json.RawMessage(
		`{"type":"object","properties":{"a":{"type":"object","description":"x","properties":{"b":{"type":["string","null"],"description":"y"}}}}}`)}}
	items := Tool{Function: FunctionDef{Name: "f", Description: "d", Parameters: json.RawMessage(
		`{"type":"object","properties":{"a":{"type":"array","description":"x","items":{"type":"object","properties":{"b":{"type":"integer","enum":[1,2]}}}}}}`)}}
	bad := Tool{Function: FunctionDef{Name: "f", Description: "d", Parameters: json.RawMessage(`{not json`)}}
	count := func(tool Tool) int { return c.CountRequest(&Request{Tools: []Tool{tool}}).Total.Tokens }
	if count(nested) <= count(flat) || count(items) <= count(flat) {
		t.Errorf("nested %d, items %d, flat %d: nested schemas must cost more", count(nested), count(items), count(flat))
	}
	if n := count(bad); n <= 0 {
		t.Errorf("malformed schema counted %d", n)
	}
}

// TestLargeRequest checks the sum invariant on a 100-message request.
func TestLargeRequest(t *testing.T) {
	r := newTestRegistry(t)
	req := typicalRequest(100)
	for _, model := range []string{"gpt-4o-2024-08-06", "gpt-4.1", "gpt-oss-20b", "gpt-3.5-turbo"} {
		c, err := r.Counter(model)
		if err != nil {
			t.Fatal(err)
		}
		b := c.CountRequest(req)
		checkStagesSum(t, b)
		est := r.Estimator().CountRequest(req)
		checkStagesSum(t, est)
		if est.Total.Tokens < b.Total.Tokens {
			t.Errorf("%s: estimator total %d < exact-encoding total %d", model, est.Total.Tokens, b.Total.Tokens)
		}
	}
}

// typicalRequest builds a deterministic request of n messages: a system
// prompt, alternating user/assistant turns, a tool call and result every
// tenth turn, and three tools.
func typicalRequest(n int) *Request {
	req := cookbookToolsRequest(nil)
	req.Tools = append(req.Tools, req.Tools[0], req.Tools[0])
	req.Messages = []Message{{Role: "system", Content: strings.Repeat("You are a careful assistant. Follow the project rules. ", 8)}}
	for i := 1; len(req.Messages) < n; i++ {
		switch {
		case i%10 == 0:
			id := fmt.Sprintf("call_%04d", i)
			req.Messages = append(req.Messages,
				Message{Role: "assistant", ToolCalls: []ToolCall{{ID: id, Type: "function",
					Function: FunctionCall{Name: "get_current_weather", Arguments: `{"location":"Paris, FR","unit":"celsius"}`}}}},
				Message{Role: "tool", ToolCallID: id, Content: `{"temperature":12,"unit":"celsius","sky":"overcast"}`})
		case i%2 == 1:
			req.Messages = append(req.Messages, Message{Role: "user",
				Content: fmt.Sprintf("Question %d: how does the ledger charge tool schemas, and what is left uncounted in turn %d?", i, i)})
		default:
			req.Messages = append(req.Messages, Message{Role: "assistant",
				Content: fmt.Sprintf("Answer %d: every stage is charged — system, tools, each unit, framing, and the reply priming. "+
					"```go\nfunc f(x int) int { return x*%d + 1 }\n```\n", i, i)})
		}
	}
	req.Messages = req.Messages[:n]
	return req
}

// TestCountRequestCached checks that cached content counts replace
// tokenizing and that the rest of the breakdown is unchanged.
func TestCountRequestCached(t *testing.T) {
	r := newTestRegistry(t)
	c, _ := r.Counter("gpt-4o-2024-08-06")
	req := typicalRequest(30)
	full := c.CountRequest(req)
	stored := make([]Count, len(req.Messages))
	for i, m := range req.Messages {
		stored[i] = c.Count(m.Content) // what the store recorded at append
	}
	same := c.CountRequestCached(req, func(i int) (Count, bool) { return stored[i], true })
	if same.Total != full.Total || len(same.Stages) != len(full.Stages) {
		t.Fatalf("cached total %v, want %v", same.Total, full.Total)
	}
	for i := range same.Stages {
		if same.Stages[i] != full.Stages[i] {
			t.Errorf("stage %d = %+v, want %+v", i, same.Stages[i], full.Stages[i])
		}
	}
	// The cached value is used as given: a marker count shows up.
	marked := c.CountRequestCached(req, func(i int) (Count, bool) {
		if i == 3 {
			return Count{Tokens: 1000, Method: Estimated, Basis: BasisEstimator}, true
		}
		return Count{}, false
	})
	if want := full.Total.Tokens - stored[3].Tokens + 1000; marked.Total.Tokens != want || marked.Total.Method != Estimated {
		t.Errorf("marked total = %v, want %d estimated", marked.Total, want)
	}
	checkStagesSum(t, marked)
}

// TestBreakdownMessagesIsMessage: the one-pass per-message sums are the
// per-message sums.
func TestBreakdownMessagesIsMessage(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Counter("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Messages: []Message{
		{Role: RoleSystem, Content: "be brief"},
		{Role: RoleUser, Name: "ann", Content: "hello there"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "f", Arguments: `{"a":1}`}}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "42"},
	}}
	b := c.CountRequest(&req)
	all := b.Messages(len(req.Messages))
	for i := range req.Messages {
		if all[i] != b.Message(i) {
			t.Errorf("message %d: %+v, want %+v", i, all[i], b.Message(i))
		}
	}
}

// TestSignedReasoningIsCounted: a reasoning is counted only when signed,
// since only then is it sent back (Anthropic's thinking block).
func TestSignedReasoningIsCounted(t *testing.T) {
	c, err := newTestRegistry(t).Counter("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	msg := Message{Role: RoleAssistant, Content: "Calling it.", Reasoning: "The user wants the lease time; search first."}
	plain := c.CountRequest(&Request{Messages: []Message{msg}}).Total.Tokens
	msg.ReasoningSignature = "sig"
	signed := c.CountRequest(&Request{Messages: []Message{msg}}).Total.Tokens
	if want := plain + c.Count(msg.Reasoning).Tokens; signed != want {
		t.Errorf("signed reasoning: %d tokens, want %d (%d unsigned)", signed, want, plain)
	}
}
