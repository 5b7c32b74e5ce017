package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
)

const configFile = `
default = "local"

[providers.local]
base_url = "http://127.0.0.1:9/v1"
credential = "none"
model = "file-model"
timeout = 2.5
structured_output = true
headers = { "X-Title" = "rlmpl" }

[providers.openai]
model = "gpt-file"
`

func mustConfig(t *testing.T, text string) *provider.Config {
	t.Helper()
	c, err := provider.ParseConfig("/home/u/.config/rlmpl/providers.toml", []byte(text))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return c
}

// TestResolvePrecedence: a call's settings win over the file, the file over
// the environment, the environment over the preset, field by field.
func TestResolvePrecedence(t *testing.T) {
	cfg := mustConfig(t, configFile)
	environ := env(map[string]string{"OPENAI_BASE_URL": "http://env.example/v1", "OLLAMA_HOST": "10.1.2.3:7777"})
	tests := []struct {
		name      string
		provider  string
		call      provider.Settings
		cfg       *provider.Config
		getenv    func(string) string
		base      string
		model     string
		cred      string
		structure bool
		from      map[string]string
	}{
		{"preset only", "openai", provider.Settings{Model: "m"}, nil, nil,
			"https://api.openai.com/v1", "m", "OPENAI_API_KEY", true,
			map[string]string{"base_url": "preset", "model": "call", "credential": "preset"}},
		{"environment over preset", "openai", provider.Settings{Model: "m"}, nil, environ,
			"http://env.example/v1", "m", "OPENAI_API_KEY", true,
			map[string]string{"base_url": "environment"}},
		{"file over environment", "openai", provider.Settings{}, cfg, environ,
			"http://env.example/v1", "gpt-file", "OPENAI_API_KEY", true,
			map[string]string{"base_url": "environment", "model": "file"}},
		{"call over file", "openai", provider.Settings{Model: "gpt-call", BaseURL: "http://call.example/v1"}, cfg, environ,
			"http://call.example/v1", "gpt-call", "OPENAI_API_KEY", true,
			map[string]string{"base_url": "call", "model": "call"}},
		{"file-only provider", "local", provider.Settings{}, cfg, environ,
			"http://127.0.0.1:9/v1", "file-model", "", true,
			map[string]string{"base_url": "file", "credential": "file", "timeout": "file", "headers": "file"}},
		{"call credential over file none", "local", provider.Settings{Credential: "LOCAL_KEY"}, cfg, nil,
			"http://127.0.0.1:9/v1", "file-model", "LOCAL_KEY", true, map[string]string{"credential": "call"}},
		{"call none over preset key", "openrouter", provider.Settings{NoCredential: true}, nil, nil,
			"https://openrouter.ai/api/v1", "openrouter/free", "", false, map[string]string{"credential": "call", "model": "preset"}},
		{"ollama host convention", "ollama", provider.Settings{Model: "llama3"}, nil, environ,
			"http://10.1.2.3:7777/v1", "llama3", "", true, map[string]string{"base_url": "environment"}},
		{"unknown name with a base URL, no model needed", "mine", provider.Settings{BaseURL: "http://127.0.0.1:1/v1/chat/completions"}, nil, nil,
			"http://127.0.0.1:1/v1/chat/completions", "", "", false, nil},
		{"call turns structured output off", "llamacpp", provider.Settings{StructuredOutput: new(false)}, nil, nil,
			"http://127.0.0.1:8080/v1", "", "", false, map[string]string{"structured_output": "call"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := provider.Resolve(tc.provider, tc.call, tc.cfg, tc.getenv)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			o := r.Options
			if o.BaseURL != tc.base || o.Model != tc.model || o.Credential != tc.cred || r.StructuredOutput != tc.structure {
				t.Errorf("Resolve = %v structured=%v, want base %s model %q credential %q structured %v", o, r.StructuredOutput, tc.base, tc.model, tc.cred, tc.structure)
			}
			for f, src := range tc.from {
				if r.From[f] != src {
					t.Errorf("From[%s] = %q, want %q (all: %v)", f, r.From[f], src, r.From)
				}
			}
			if _, err := provider.NewClient(&o); err != nil {
				t.Errorf("NewClient(resolved): %v", err)
			}
		})
	}
	r, _ := provider.Resolve("local", provider.Settings{}, cfg, nil)
	if r.Options.Timeout != 2500*time.Millisecond || r.Options.Headers["X-Title"] != "rlmpl" {
		t.Errorf("file timeout/headers = %v %v", r.Options.Timeout, r.Options.Headers)
	}
}

// TestConfigErrors: every configuration error names its field in the
// user's words and never echoes a key.
func TestConfigErrors(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	files := []struct {
		name, text, field string
	}{
		{"pasted key", "[providers.x]\napi_key = \"" + secret + "\"\n", "credential"},
		{"raw credential", "[providers.x]\ncredential = \"" + secret + "\"\n", "credential"},
		{"env of a key", "[providers.x]\ncredential = \"env:" + secret + "\"\n", "credential"},
		{"unknown key", "[providers.x]\ncolour = \"red\"\n", "colour"},
		{"unknown top key", "colour = 1\n", "config"},
		{"negative timeout", "[providers.x]\ntimeout = -1\n", "timeout"},
		{"both endpoints", "[providers.x]\nbase_url = \"http://a/v1\"\nendpoint = \"http://b/v1/chat/completions\"\n", "endpoint"},
		{"syntax", "[providers.x\nmodel = \"" + secret + "\"\n", "config"},
		{"wrong type", "[providers.x]\ntimeout = \"soon\"\n", "config"},
		{"bad default", "default = \"two words\"\n", "default"},
	}
	for _, tc := range files {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.ParseConfig("p.toml", []byte(tc.text))
			checkConfigError(t, err, tc.field, secret)
		})
	}
	cfg := mustConfig(t, "[providers.bad]\nbase_url = \"ftp://x\"\n")
	calls := []struct {
		name, provider string
		call           provider.Settings
		cfg            *provider.Config
		field          string
	}{
		{"unknown provider", "nowhere", provider.Settings{}, nil, "base_url"},
		{"bad URL from the file", "bad", provider.Settings{}, cfg, "base_url"},
		{"user in URL", "x", provider.Settings{BaseURL: "http://u:" + secret + "@h/v1"}, nil, "base_url"},
		{"credential that is a key", "openai", provider.Settings{Model: "m", Credential: secret}, nil, "credential"},
		{"authorization header", "llamacpp", provider.Settings{Headers: map[string]string{"authorization": "Bearer " + secret}}, nil, "headers"},
		{"negative timeout", "llamacpp", provider.Settings{Timeout: -time.Second}, nil, "timeout"},
		{"hosted preset without a model", "openai", provider.Settings{}, nil, "model"},
		{"bad name", "", provider.Settings{}, nil, "provider"},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.Resolve(tc.provider, tc.call, tc.cfg, nil)
			checkConfigError(t, err, tc.field, secret)
		})
	}
	if _, err := provider.Resolve("openai", provider.Settings{}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "--model") || !strings.Contains(err.Error(), "model(M)") {
		t.Errorf("missing model error should say how to set one: %v", err)
	}
}

func checkConfigError(t *testing.T, err error, field, secret string) {
	t.Helper()
	var ce *provider.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v, want a *ConfigError", err)
	}
	if ce.Field != field {
		t.Errorf("field = %q, want %q (%v)", ce.Field, field, err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "Options.") {
		t.Errorf("error leaks a key or a Go field: %v", err)
	}
}

// TestDefaultName: the file's default, else the first candidate whose key
// is in the environment, else an error that says how to configure one.
func TestDefaultName(t *testing.T) {
	cfg := mustConfig(t, configFile)
	candidates := []string{"openrouter", "openai", "deepseek"}
	if n, err := provider.DefaultName(cfg, candidates, env(map[string]string{"OPENAI_API_KEY": "k"})); n != "local" || err != nil {
		t.Errorf("with a file default: %q, %v", n, err)
	}
	if n, err := provider.DefaultName(nil, candidates, env(map[string]string{"OPENAI_API_KEY": "k", "DEEPSEEK_API_KEY": "k"})); n != "openai" || err != nil {
		t.Errorf("from the environment: %q, %v", n, err)
	}
	_, err := provider.DefaultName(nil, candidates, env(nil))
	var ce *provider.ConfigError
	if !errors.As(err, &ce) || ce.Field != "provider" || !strings.Contains(err.Error(), "OPENROUTER_API_KEY") ||
		!strings.Contains(err.Error(), "providers.toml") {
		t.Errorf("nothing configured: %v", err)
	}
}

// TestNoModelIsSentWithoutOne: a resolved local provider with no model sends
// a body without "model" (llama.cpp serves its one model) and no key.
func TestNoModelIsSentWithoutOne(t *testing.T) {
	f := newFake(t, reply(200, okBody))
	r, err := provider.Resolve("mine", provider.Settings{BaseURL: f.url()}, nil, env(map[string]string{"OPENAI_API_KEY": testKey}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := provider.NewClient(&r.Options)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	got := f.requests()[0]
	if _, has := got.Body["model"]; has || got.Header.Get("Authorization") != "" {
		t.Errorf("body %s, Authorization %q: want no model and no key", got.Raw, got.Header.Get("Authorization"))
	}
}

// TestSchemaFree: only the local servers that apply a response format as a
// sampling grammar charge it no prompt tokens, and only while structured
// output is on.
func TestSchemaFree(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name string
		call provider.Settings
		want bool
	}{
		{"llamacpp", provider.Settings{}, true},
		{"vllm", provider.Settings{}, true},
		{"ollama", provider.Settings{Model: "llama3"}, true},
		{"llamacpp", provider.Settings{StructuredOutput: &off}, false},
		{"openai", provider.Settings{Model: "gpt-4o"}, false},
		{"mine", provider.Settings{BaseURL: "http://127.0.0.1:1/v1", StructuredOutput: new(true)}, false},
	} {
		r, err := provider.Resolve(tc.name, tc.call, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.SchemaFree != tc.want {
			t.Errorf("%s %+v: SchemaFree = %v, want %v", tc.name, tc.call, r.SchemaFree, tc.want)
		}
	}
}

func TestParseConfigPrices(t *testing.T) {
	cfg, err := provider.ParseConfig("p.toml", []byte(`
[prices."gpt-4.1-mini"]
input = 0.40
cached_input = 0.10
output = 1.60

[prices."local-*"]
input = 0
output = 0
`))
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Prices{"gpt-4.1-mini": {Input: 0.4, CachedInput: 0.1, CacheWrite: 0.4, Output: 1.6}, "local-*": {}}
	if len(cfg.Prices) != 2 || cfg.Prices["gpt-4.1-mini"] != want["gpt-4.1-mini"] || cfg.Prices["local-*"] != want["local-*"] {
		t.Errorf("Prices = %+v, want %+v", cfg.Prices, want)
	}
	for _, bad := range []string{
		"[prices.m]\ninput = 1\n",                    // no output
		"[prices.m]\ninput = -1\noutput = 1\n",       // negative
		"[prices.m]\ninput = 1\noutput = 1\nx = 2\n", // unknown key
	} {
		if _, err := provider.ParseConfig("p.toml", []byte(bad)); err == nil {
			t.Errorf("ParseConfig(%q) accepted it", bad)
		}
	}
}

// TestParseConfigLeavesMCPTables: the file's [mcp.NAME] tables are
// host/mcp's (mcp.ParseConfig): they are no unknown key here.
func TestParseConfigLeavesMCPTables(t *testing.T) {
	cfg, err := provider.ParseConfig("p.toml", []byte("default = \"local\"\n[providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\n\n[mcp.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n"))
	if err != nil || cfg.Default != "local" || len(cfg.Providers) != 1 {
		t.Fatalf("ParseConfig = %+v, %v", cfg, err)
	}
}
