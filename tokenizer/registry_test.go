package tokenizer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestEncodingForModel(t *testing.T) {
	r := newTestRegistry(t)
	for _, tc := range []struct{ model, want string }{
		// Exact names and dated snapshots.
		{"gpt-4o", O200kBase},
		{"gpt-4o-2024-08-06", O200kBase},
		{"gpt-4o-2024-05-13", O200kBase},
		{"gpt-4o-mini", O200kBase},
		{"gpt-4o-mini-2024-07-18", O200kBase},
		{"chatgpt-4o-latest", O200kBase},
		{"gpt-4.1", O200kBase},
		{"gpt-4.1-mini-2025-04-14", O200kBase},
		{"gpt-4.1-nano", O200kBase},
		{"gpt-4.5-preview", O200kBase},
		{"gpt-4.5-preview-2025-02-27", O200kBase},
		{"gpt-5", O200kBase},
		{"gpt-5-2025-08-07", O200kBase},
		{"gpt-5-mini-2025-08-07", O200kBase},
		{"gpt-5-nano", O200kBase},
		{"gpt-5-chat-latest", O200kBase},
		{"gpt-5-codex", O200kBase},
		{"gpt-5.1", O200kBase},
		{"gpt-5.1-codex-mini", O200kBase},
		{"o1", O200kBase},
		{"o1-2024-12-17", O200kBase},
		{"o1-mini", O200kBase},
		{"o1-preview-2024-09-12", O200kBase},
		{"o1-pro", O200kBase},
		{"o3", O200kBase},
		{"o3-mini-2025-01-31", O200kBase},
		{"o3-pro", O200kBase},
		{"o4-mini", O200kBase},
		{"o4-mini-2025-04-16", O200kBase},
		{"gpt-oss-20b", O200kHarmony},
		{"gpt-oss-120b", O200kHarmony},
		{"gpt-4", Cl100kBase},
		{"gpt-4-0613", Cl100kBase},
		{"gpt-4-32k", Cl100kBase},
		{"gpt-4-turbo-2024-04-09", Cl100kBase},
		{"gpt-3.5-turbo", Cl100kBase},
		{"gpt-3.5-turbo-0125", Cl100kBase},
		{"gpt-3.5-turbo-16k", Cl100kBase},
		{"gpt-35-turbo", Cl100kBase},
		{"gpt-35-turbo-16k", Cl100kBase},
		{"text-embedding-3-small", Cl100kBase},
		{"text-embedding-ada-002", Cl100kBase},
		{"davinci-002", Cl100kBase},
		{"text-davinci-003", P50kBase},
		{"code-davinci-002", P50kBase},
		{"text-davinci-edit-001", P50kEdit},
		{"davinci", R50kBase},
		{"text-similarity-ada-001", R50kBase},
		// Fine-tunes resolve through their base model.
		{"ft:gpt-4o-mini-2024-07-18:org::abc123", O200kBase},
		{"ft:gpt-4o-2024-08-06:my-org:custom:9zYx", O200kBase},
		{"ft:gpt-4.1-nano-2025-04-14:org::x", O200kBase},
		{"ft:gpt-3.5-turbo-0613:org::x", Cl100kBase},
		{"ft:gpt-4-0613:org::x", Cl100kBase},
		{"ft:davinci-002:org::x", Cl100kBase},
		{"davinci:ft-personal-2023-01-01-00-00-00", R50kBase},
		// Routing prefix.
		{"openai/gpt-4o", O200kBase},
		{"openai/gpt-oss-120b", O200kHarmony},
	} {
		enc, err := r.EncodingForModel(tc.model)
		if err != nil {
			t.Errorf("EncodingForModel(%q): %v", tc.model, err)
			continue
		}
		if enc.Name() != tc.want {
			t.Errorf("EncodingForModel(%q) = %s, want %s", tc.model, enc.Name(), tc.want)
		}
	}
	// The npm tiktoken 1.0.22 table agrees with ours on every model it lists.
	b, err := os.ReadFile(filepath.Join("testdata", "model_to_encoding.json"))
	if err != nil {
		t.Fatal(err)
	}
	var upstream map[string]string
	if err := json.Unmarshal(b, &upstream); err != nil {
		t.Fatal(err)
	}
	for model, want := range upstream {
		if want == "gpt2" {
			continue // not offered: same ranks as r50k_base, no model needs it
		}
		enc, err := r.EncodingForModel(model)
		if err != nil || enc.Name() != want {
			t.Errorf("EncodingForModel(%q) = %v, %v; npm tiktoken says %s", model, enc, err, want)
		}
	}
}

func TestUnknown(t *testing.T) {
	r := newTestRegistry(t)
	for _, model := range []string{"", "claude-3-5-sonnet", "gpt-4x", "GPT-4O", " gpt-4o", "ft:unknown-base:org::x",
		"gpt2", "llama-3.1-8b", "gpt-4o\x00", "o2", "openai/"} {
		if _, err := r.EncodingForModel(model); !errors.Is(err, ErrUnknownModel) {
			t.Errorf("EncodingForModel(%q) err = %v, want ErrUnknownModel", model, err)
		}
		if _, err := r.Counter(model); !errors.Is(err, ErrUnknownModel) {
			t.Errorf("Counter(%q) err = %v, want ErrUnknownModel", model, err)
		}
	}
	for _, enc := range []string{"", "gpt2", "O200K_BASE", "o200k", "llama3"} {
		if _, err := r.Encoding(enc); !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("Encoding(%q) err = %v, want ErrUnknownEncoding", enc, err)
		}
		if _, err := r.CounterForEncoding(enc); !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("CounterForEncoding(%q) err = %v, want ErrUnknownEncoding", enc, err)
		}
	}
}

func TestCounterLabels(t *testing.T) {
	r := newTestRegistry(t)
	c, _ := r.Counter("gpt-4o")
	if got := c.Count("hello world"); got != (Count{Tokens: 2, Method: Exact, Basis: BasisBPE, Encoding: O200kBase}) {
		t.Errorf("Counter(gpt-4o).Count = %+v", got)
	}
	ce, _ := r.CounterForEncoding(Cl100kBase)
	if got := ce.Count("hello world"); got.Method != Exact || got.Encoding != Cl100kBase || ce.Framing().Verified {
		t.Errorf("CounterForEncoding.Count = %+v, framing %+v", got, ce.Framing())
	}
	est := r.Estimator().Count("hello world")
	if est.Method != Estimated || est.Basis != BasisEstimator || est.SafetyPercent != EstimatorSafetyPercent || est.Encoding != "" {
		t.Errorf("Estimator().Count = %+v", est)
	}
	if (Counter{}).Framing() != DefaultFraming("") {
		t.Error("zero Counter must use DefaultFraming(\"\")")
	}
	// A fine-tune of a verified snapshot is not itself verified.
	ft, _ := r.Counter("ft:gpt-4o-2024-08-06:org::x")
	if ft.Framing().Verified {
		t.Error("fine-tune framing marked verified")
	}
	if s := Exact.String() + Estimated.String() + Method(7).String(); s != "exactestimatedMethod(7)" {
		t.Errorf("Method strings: %q", s)
	}
}

func TestModelsTable(t *testing.T) {
	r := newTestRegistry(t)
	ms := r.Models()
	if len(ms) != len(builtinModels) {
		t.Errorf("Models() has %d entries, built-in table %d", len(ms), len(builtinModels))
	}
	// Deterministic: two registries list the same table.
	ms2 := newTestRegistry(t).Models()
	for i := range ms {
		if ms[i].Name != ms2[i].Name || ms[i].Prefix != ms2[i].Prefix {
			t.Fatalf("Models()[%d] differs between registries", i)
		}
	}
	if got := r.Encodings(); strings.Join(got, ",") != "cl100k_base,o200k_base,o200k_harmony,p50k_base,p50k_edit,r50k_base" {
		t.Errorf("Encodings() = %v", got)
	}
}

// TestRegisterEncoding adds an encoding from a ranks file at run time, maps
// models to it, and checks that the original registry is unchanged.
func TestRegisterEncoding(t *testing.T) {
	r := newTestRegistry(t)
	base, _ := r.Encoding(R50kBase)
	custom, err := NewEncoding(EncodingSpec{
		Name:          "mini",
		Ranks:         bytes.NewReader(ranksFile(t, base)),
		Pattern:       PatternCl100k,
		SpecialTokens: map[string]int{"<|begin|>": 60000, "<|end|>": 60001},
	})
	if err != nil {
		t.Fatal(err)
	}
	fr := Framing{PerMessage: 4, ReplyPriming: 4, Verified: true}
	r2, err := r.With(&Options{
		Encodings: []*Encoding{custom},
		Models: []Model{
			{Name: "mini-", Prefix: true, Encoding: "mini"},
			{Name: "mini-chat", Encoding: "mini", Framing: &fr},
			{Name: "gpt-4o", Encoding: Cl100kBase}, // replaces a built-in entry
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := r2.EncodingForModel("mini-7b"); err != nil || e != custom {
		t.Errorf("EncodingForModel(mini-7b) = %v, %v", e, err)
	}
	c, _ := r2.Counter("mini-chat")
	if c.Framing() != fr {
		t.Errorf("mini-chat framing = %+v", c.Framing())
	}
	if b := c.CountRequest(&Request{Messages: []Message{{Role: "user", Content: "hi"}}}); b.Total.Method != Exact ||
		b.Total.Tokens != 4+custom.Count("user")+custom.Count("hi")+4 {
		t.Errorf("mini-chat request = %+v", b.Total)
	}
	if e, _ := r2.EncodingForModel("gpt-4o"); e.Name() != Cl100kBase {
		t.Errorf("override: gpt-4o → %s", e.Name())
	}
	if e, _ := r.EncodingForModel("gpt-4o"); e.Name() != O200kBase {
		t.Errorf("With changed the original registry: gpt-4o → %s", e.Name())
	}
	if _, err := r.Encoding("mini"); !errors.Is(err, ErrUnknownEncoding) {
		t.Error("With changed the original registry's encodings")
	}
	ids := custom.Encode("x<|end|>")
	if got, _ := custom.Decode(append(ids, 60001, 60000)); got != "x<|end|><|end|><|begin|>" {
		t.Errorf("Decode with specials = %q", got)
	}

	// Validation.
	for _, tc := range []struct {
		name string
		opts *Options
	}{
		{"duplicate encoding", &Options{Encodings: []*Encoding{custom, custom}}},
		{"built-in name", &Options{Encodings: []*Encoding{base}}},
		{"nil encoding", &Options{Encodings: []*Encoding{nil}}},
		{"unknown encoding", &Options{Models: []Model{{Name: "x", Encoding: "nope"}}}},
		{"empty model", &Options{Models: []Model{{Encoding: O200kBase}}}},
		{"duplicate model", &Options{Models: []Model{{Name: "x", Encoding: O200kBase}, {Name: "x", Encoding: Cl100kBase}}}},
	} {
		if _, err := New(tc.opts); err == nil {
			t.Errorf("New(%s): no error", tc.name)
		}
	}
}

func TestNewEncodingErrors(t *testing.T) {
	r := newTestRegistry(t)
	base, _ := r.Encoding(R50kBase)
	good := ranksFile(t, base)
	bytesOnly := func() []byte { // the 256 single bytes only
		var b bytes.Buffer
		for i := range 256 {
			b.WriteString(base64.StdEncoding.EncodeToString([]byte{byte(i)}) + " " + strconv.Itoa(i) + "\n")
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		spec EncodingSpec
	}{
		{"no name", EncodingSpec{Ranks: bytes.NewReader(good), Pattern: PatternR50k}},
		{"no ranks", EncodingSpec{Name: "x", Pattern: PatternR50k}},
		{"no pattern", EncodingSpec{Name: "x", Ranks: bytes.NewReader(good)}},
		{"bad pattern", EncodingSpec{Name: "x", Ranks: bytes.NewReader(good), Pattern: `(`}},
		{"empty ranks", EncodingSpec{Name: "x", Ranks: strings.NewReader("\n\n"), Pattern: PatternR50k}},
		{"bad line", EncodingSpec{Name: "x", Ranks: strings.NewReader("YQ== 0 extra\n"), Pattern: PatternR50k}},
		{"bad base64", EncodingSpec{Name: "x", Ranks: strings.NewReader("!!!! 0\n"), Pattern: PatternR50k}},
		{"bad rank", EncodingSpec{Name: "x", Ranks: strings.NewReader("YQ== -1\n"), Pattern: PatternR50k}},
		{"missing bytes", EncodingSpec{Name: "x", Ranks: strings.NewReader("YQ== 0\n"), Pattern: PatternR50k}},
		{"duplicate token", EncodingSpec{Name: "x", Ranks: io2(bytesOnly(), "YQ== 300\n"), Pattern: PatternR50k}},
		{"duplicate rank", EncodingSpec{Name: "x", Ranks: io2(bytesOnly(), "YWE= 5\n"), Pattern: PatternR50k}},
		{"sparse ranks", EncodingSpec{Name: "x", Ranks: io2(bytesOnly(), "YWE= 999999999\n"), Pattern: PatternR50k}},
		{"special is a rank", EncodingSpec{Name: "x", Ranks: bytes.NewReader(bytesOnly()), Pattern: PatternR50k,
			SpecialTokens: map[string]int{"<|s|>": 7}}},
	} {
		if _, err := NewEncoding(tc.spec); err == nil {
			t.Errorf("NewEncoding(%s): no error", tc.name)
		}
	}
	// Byte-level fallback alone still round-trips.
	e, err := NewEncoding(EncodingSpec{Name: "bytes", Ranks: bytes.NewReader(bytesOnly()), Pattern: PatternR50k})
	if err != nil {
		t.Fatal(err)
	}
	if s := "héllo 世界"; e.Count(s) != len(s) {
		t.Errorf("bytes-only Count(%q) = %d, want %d", s, e.Count(s), len(s))
	}
}

func io2(a []byte, b string) *bytes.Reader {
	return bytes.NewReader(append(append([]byte(nil), a...), b...))
}

// TestInvalidUTF8 checks the documented behaviour: each invalid byte is
// counted as U+FFFD, exactly the text encoding/json sends the provider.
func TestInvalidUTF8(t *testing.T) {
	r := newTestRegistry(t)
	for _, name := range []string{Cl100kBase, O200kBase, R50kBase} {
		enc, _ := r.Encoding(name)
		for _, s := range []string{"\xff", "a\xffb", "\xe4\xb8", "caf\xc3", "\xed\xa0\x80 surrogate", "ok \x80\x80\x80 ok", "日本\xe8\xaa"} {
			if utf8.ValidString(s) {
				t.Fatalf("%q is valid", s)
			}
			js, _ := json.Marshal(s)
			var sent string
			_ = json.Unmarshal(js, &sent)
			if got, want := enc.Count(s), enc.Count(sent); got != want {
				t.Errorf("%s Count(%q) = %d, want %d (the JSON-sent text %q)", name, s, got, want, sent)
			}
			ids := enc.Encode(s)
			if got, _ := enc.Decode(ids); got != sent {
				t.Errorf("%s Decode(Encode(%q)) = %q, want %q", name, s, got, sent)
			}
			if e := Estimate(s); e.Tokens < enc.Count(s) {
				t.Errorf("Estimate(%q) = %d < %d", s, e.Tokens, enc.Count(s))
			}
		}
	}
	if sanitize("valid ✓") != "valid ✓" {
		t.Error("sanitize changed valid text")
	}
}

func TestDecodeErrors(t *testing.T) {
	r := newTestRegistry(t)
	for _, name := range goldenEncodings {
		enc, _ := r.Encoding(name)
		for _, ids := range [][]int{{-1}, {1 << 30}, {1, 2, 1 << 30}} {
			if _, err := enc.Decode(ids); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("%s Decode(%v) err = %v, want ErrInvalidToken", name, ids, err)
			}
		}
		if s, err := enc.Decode(nil); s != "" || err != nil {
			t.Errorf("%s Decode(nil) = %q, %v", name, s, err)
		}
	}
	p50k, _ := r.Encoding(P50kBase)
	if _, err := p50k.Decode([]int{50256}); err != nil { // <|endoftext|>, the hole in the ranks
		t.Errorf("p50k Decode(50256): %v", err)
	}
	// A token split mid-character decodes to bytes that concatenate back.
	o, _ := r.Encoding(Cl100kBase)
	ids := o.Encode("👨‍👩‍👧")
	var joined string
	for _, id := range ids {
		s, err := o.Decode([]int{id})
		if err != nil {
			t.Fatal(err)
		}
		joined += s
	}
	if joined != "👨‍👩‍👧" {
		t.Errorf("per-token decode joined = %q", joined)
	}
}

// TestConcurrent shares one registry across goroutines: first use of the
// encodings, Encode/Count/Decode, counters and request counting. Run it
// under -race.
func TestConcurrent(t *testing.T) {
	r := newTestRegistry(t)
	inputs := goldenInputs(t)
	want := make(map[string]int)
	for _, name := range goldenEncodings {
		for _, c := range loadGolden(t, name).Cases {
			want[name+"|"+c.Name] = c.Count
		}
	}
	req := typicalRequest(40)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, name := range goldenEncodings {
				name = goldenEncodings[(i+g)%len(goldenEncodings)]
				enc, err := r.Encoding(name)
				if err != nil {
					errs <- err.Error()
					return
				}
				for cname, text := range inputs {
					if len(text) > 8000 {
						continue // keep -race fast
					}
					if n := enc.Count(text); n != want[name+"|"+cname] {
						errs <- name + " " + cname
					}
					if s, _ := enc.Decode(enc.Encode(text)); s != text {
						errs <- "round trip " + name + " " + cname
					}
				}
			}
			c, _ := r.Counter("gpt-4o-2024-08-06")
			b := c.CountRequest(req)
			if b2 := c.CountRequest(req); b2.Total != b.Total {
				errs <- "request count not deterministic"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestChatFormatLlama3: an encoding registered with chat_format llama3
// counts a request as llama.cpp renders it: 4 + role per message on the
// trimmed content, 5 for BOS and the reply's priming, a json_schema
// response format free (it is a sampling grammar); a name makes the
// framing an estimate. The figures are the template's arithmetic; the e2e
// test checks them against a real llama-server.
func TestChatFormatLlama3(t *testing.T) {
	r := newTestRegistry(t)
	base, _ := r.Encoding(Cl100kBase)
	enc, err := NewEncoding(EncodingSpec{Name: "l3", Ranks: bytes.NewReader(ranksFile(t, base)), Pattern: PatternCl100k, ChatFormat: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := r.With(&Options{Encodings: []*Encoding{enc}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r2.CounterForEncoding("l3")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Messages: []Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "  hello world\n"}}}
	want := 1 + (4 + enc.Count("system") + enc.Count("You are terse.")) + (4 + enc.Count("user") + enc.Count("hello world")) + 4
	b := c.CountRequest(&req)
	if b.Total.Tokens != want || b.Total.Method != Exact {
		t.Errorf("llama3 request = %v, want %d exact", b.Total, want)
	}
	req.ResponseFormat = &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "plan", Schema: []byte(`{"type":"object"}`)}}
	if b := c.CountRequest(&req); b.Total.Tokens != want || b.Total.Method != Exact || b.Stages[len(b.Stages)-1].Kind != StageResponseFormat {
		t.Errorf("with a schema = %v, %v", b.Total, b.Stages)
	}
	// Tools, tool calls and call ids are not rendered: free, exactly.
	withTools := req
	withTools.Tools = []Tool{{Type: "function", Function: FunctionDef{Name: "history_peek", Description: "Read one message.",
		Parameters: []byte(`{"type":"object","properties":{"sequence":{"type":"integer"}}}`)}}}
	withTools.Messages = append(slices.Clone(req.Messages),
		Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "history_peek", Arguments: `{"sequence":1}`}}}},
		Message{Role: "tool", ToolCallID: "c1", Content: "[1] user: hello"})
	wantTools := want + (4 + enc.Count("assistant")) + (4 + enc.Count("tool") + enc.Count("[1] user: hello"))
	if b := c.CountRequest(&withTools); b.Total.Tokens != wantTools || b.Total.Method != Exact {
		t.Errorf("llama3 request with tools = %v, want %d exact", b.Total, wantTools)
	}
	req.Messages[1].Name = "alice"
	if b := c.CountRequest(&req); b.Total.Method != Estimated {
		t.Errorf("a dropped name is counted exact: %v", b.Total)
	}
	// OpenAI framing: the schema is charged, estimated.
	oc, _ := r.CounterForEncoding(Cl100kBase)
	req.Messages[1].Name = ""
	if b := oc.CountRequest(&req); b.Stages[len(b.Stages)-1].Count.Tokens == 0 || b.Total.Method != Estimated {
		t.Errorf("OpenAI response format = %v", b.Stages[len(b.Stages)-1])
	}
	if _, err := NewEncoding(EncodingSpec{Name: "x", Ranks: bytes.NewReader(ranksFile(t, base)), Pattern: PatternCl100k, ChatFormat: "chatml"}); err == nil {
		t.Error("unknown chat format accepted")
	}
}

// TestUndatedAliasesAreEstimated: gpt-4o, gpt-4.1 and their kin use their
// family's published framing but were never verified against a provider's
// usage.prompt_tokens, so their framing is labelled Estimated; the dated
// snapshots the cookbook verified are Exact.
func TestUndatedAliasesAreEstimated(t *testing.T) {
	r := newTestRegistry(t)
	req := Request{Messages: []Message{{Role: "user", Content: "hi"}}}
	for _, m := range []string{"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5", "o3", "openai/gpt-4o"} {
		c, err := r.Counter(m)
		if err != nil {
			t.Fatal(err)
		}
		if f := c.Framing(); f.Verified || f.PerMessage != 3 || f.ReplyPriming != 3 {
			t.Errorf("%s framing = %+v, want the cookbook's 3/3, unverified", m, f)
		}
		if b := c.CountRequest(&req); b.Total.Method != Estimated {
			t.Errorf("%s request counted %v", m, b.Total)
		}
	}
	c, _ := r.Counter("gpt-4o-2024-08-06")
	if b := c.CountRequest(&req); b.Total.Method != Exact {
		t.Errorf("verified snapshot counted %v", b.Total)
	}
}

// TestCallerCounter: a caller's counter counts every text, labelled
// caller_supplied; a sum with an estimated part is estimated, one with
// only exact parts besides is caller_supplied.
func TestCallerCounter(t *testing.T) {
	c := CallerCounter(func(s string) int { return len(s) })
	if n := c.Count("hello"); n.Tokens != 5 || n.Method != CallerSupplied || n.Basis != BasisCaller || n.Method.String() != "caller_supplied" {
		t.Fatalf("Count = %+v", n)
	}
	if c.Encoding() != nil {
		t.Error("a caller counter names an encoding: packs would cache its counts under it")
	}
	sum := Count{Tokens: 1, Method: Exact}
	sum.add(Count{Tokens: 2, Method: CallerSupplied})
	if sum.Method != CallerSupplied {
		t.Errorf("exact + caller_supplied = %v", sum.Method)
	}
	sum.add(Count{Tokens: 2, Method: Exact})
	sum.add(Count{Tokens: 2, Method: Estimated})
	sum.add(Count{Tokens: 2, Method: CallerSupplied})
	if sum.Method != Estimated || sum.Tokens != 9 {
		t.Errorf("with an estimated part = %+v", sum)
	}
}
