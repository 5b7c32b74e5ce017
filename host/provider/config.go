package provider

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Configuration: which endpoint, model and credential a provider name
// stands for. It comes in layers, merged field by field, the first that
// says something winning:
//
//  1. the call's own settings (a Prolog provider(Name, Config) term, a
//     model(M) option, the CLI's --base-url and --model);
//  2. the configuration file (providers.toml, [ParseConfig]), which names
//     providers once for every script and command;
//  3. the environment, in the conventions users already have
//     (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST; keys such as
//     OPENAI_API_KEY are read at request time, never here);
//  4. the preset of that name ([Preset]).
//
// The file wins over the environment because it is rlmpl's own, explicit
// configuration, while variables like OPENAI_BASE_URL may be set for other
// tools. Every problem is a [*ConfigError] in the words a user writes
// (base_url, credential, model), never a Go field name.

// Settings is one layer of a provider's configuration. A zero field says
// nothing, so that layers merge field by field.
type Settings struct {
	// BaseURL is the API root (base_url), or the full chat-completions
	// endpoint (endpoint, upstream's spelling).
	BaseURL string
	// Model is the model sent when a request names none.
	Model string
	// Credential is the name of the environment variable that holds the
	// key (credential(env(Name)), credential = "env:NAME"). Never a key.
	Credential string
	// NoCredential says that no key is sent (credential(none)); it beats a
	// Credential of a lower layer.
	NoCredential bool
	// Timeout bounds one HTTP attempt (timeout(Seconds)).
	Timeout time.Duration
	// Headers are extra request headers (headers([Name-Value, ...])). A
	// higher layer's map replaces a lower one's whole.
	Headers map[string]string
	// StructuredOutput says whether the server honours response_format
	// json_schema, so that planners are asked for plans that match the plan
	// schema (structured_output(Bool)); nil says nothing.
	StructuredOutput *bool
	// API is the wire format (api(Name), api = "anthropic"): a
	// [Dialect]'s name.
	API string
	// CacheTTL is how long the provider keeps the prefixes a request marks
	// for caching (cache_ttl(T), cache_ttl = "1h"): "5m" or "1h".
	CacheTTL string
}

// Where a layer comes from, as messages name it.
const (
	SourceCall        = "call"
	SourceFile        = "file"
	SourceEnvironment = "environment"
	SourcePreset      = "preset"
)

// merge layers the settings, highest first, and records where each field
// came from.
func merge(layers []layer) (Settings, map[string]string) {
	var s Settings
	from := map[string]string{}
	take := func(field, src string, has bool, apply func()) {
		if _, done := from[field]; done || !has {
			return
		}
		from[field] = src
		apply()
	}
	for _, l := range layers {
		v := l.s
		take("base_url", l.src, v.BaseURL != "", func() { s.BaseURL = v.BaseURL })
		take("model", l.src, v.Model != "", func() { s.Model = v.Model })
		take("credential", l.src, v.Credential != "" || v.NoCredential, func() { s.Credential, s.NoCredential = v.Credential, v.NoCredential })
		take("timeout", l.src, v.Timeout != 0, func() { s.Timeout = v.Timeout })
		take("headers", l.src, v.Headers != nil, func() { s.Headers = maps.Clone(v.Headers) })
		take("structured_output", l.src, v.StructuredOutput != nil, func() { s.StructuredOutput = v.StructuredOutput })
		take("api", l.src, v.API != "", func() { s.API = v.API })
		take("cache_ttl", l.src, v.CacheTTL != "", func() { s.CacheTTL = v.CacheTTL })
	}
	return s, from
}

type layer struct {
	src string
	s   Settings
}

// Config is a configuration file: the providers it names and the default
// one. It is immutable after [ParseConfig] and safe for concurrent use.
type Config struct {
	// Path is where the file was read, for messages ("" when unknown).
	Path string
	// Default is the provider of calls that name none ("" when the file
	// sets none).
	Default string
	// Providers are the file's [providers.NAME] tables.
	Providers map[string]Settings
	// Prices are the file's [prices."MODEL"] tables (nil when none).
	Prices Prices
}

// fileConfig is the TOML shape of a configuration file.
type fileConfig struct {
	Default   string                  `toml:"default"`
	Providers map[string]fileProvider `toml:"providers"`
	Prices    map[string]filePrice    `toml:"prices"`
}

type fileProvider struct {
	BaseURL          string            `toml:"base_url"`
	Endpoint         string            `toml:"endpoint"`
	Model            string            `toml:"model"`
	Credential       string            `toml:"credential"`
	Timeout          float64           `toml:"timeout"`
	Headers          map[string]string `toml:"headers"`
	StructuredOutput *bool             `toml:"structured_output"`
	API              string            `toml:"api"`
	CacheTTL         string            `toml:"cache_ttl"`
}

// secretKeys are keys people write when they paste a key into a file.
var secretKeys = []string{"api_key", "apikey", "key", "token", "secret", "password", "authorization"}

// ParseConfig reads a configuration file in TOML:
//
//	default = "local"                        # the provider of calls that name none
//
//	[providers.local]                         # provider(local) in Prolog, --provider local
//	base_url = "http://127.0.0.1:8080/v1"     # or endpoint = ".../chat/completions"
//	credential = "none"                       # or "env:LOCAL_API_KEY"; never a key
//	model = "llama3"
//	timeout = 30                              # seconds
//	structured_output = true                  # ask planners for schema-shaped plans
//	headers = { "X-Title" = "rlmpl" }
//
//	[providers.claude]
//	api = "anthropic"                         # the wire format: openai (default) or anthropic
//	base_url = "https://api.anthropic.com/v1"
//	credential = "env:ANTHROPIC_API_KEY"
//	model = "claude-sonnet-4-5"
//	cache_ttl = "1h"                          # how long cache breakpoints live: 5m or 1h
//
//	[providers.openai]                        # a preset's name: only what differs
//	model = "gpt-4.1-mini"
//
//	[prices."gpt-4.1-mini"]                   # US dollars per million tokens
//	input = 0.40
//	cached_input = 0.10                       # default: input
//	output = 1.60
//
// path names the file in messages. Errors are [*ConfigError]s; a key
// written where a credential belongs is refused without being echoed.
func ParseConfig(path string, data []byte) (*Config, error) {
	var f fileConfig
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// NB: not pe.ErrorWithPosition(): it quotes the line, which may
			// hold a pasted key.
			return nil, &ConfigError{Field: "config", Message: fmt.Sprintf("%s:%d: %s", path, pe.Position.Line, pe.Message)}
		}
		return nil, &ConfigError{Field: "config", Message: fmt.Sprintf("%s: %v", path, err)}
	}
	for _, k := range md.Undecoded() {
		if k[0] == "mcp" {
			continue // the MCP servers' tables: host/mcp's ParseConfig reads them
		}
		name := k[len(k)-1]
		field := "config"
		if len(k) == 3 && k[0] == "providers" {
			field = name
			if slices.Contains(secretKeys, strings.ToLower(name)) {
				return nil, &ConfigError{Provider: k[1], Field: "credential", Message: fmt.Sprintf(
					"%s: providers.%s.%s: keys are never configuration: name the environment variable that holds it (credential = \"env:VARIABLE\")", path, k[1], name)}
			}
		}
		return nil, &ConfigError{Field: field, Message: fmt.Sprintf("%s: unknown key %s", path, k.String())}
	}
	c := &Config{Path: path, Default: f.Default, Providers: map[string]Settings{}}
	for name, p := range f.Providers {
		s := Settings{BaseURL: p.BaseURL, Model: p.Model, Headers: p.Headers, StructuredOutput: p.StructuredOutput, API: p.API, CacheTTL: p.CacheTTL}
		if p.BaseURL != "" && p.Endpoint != "" {
			return nil, &ConfigError{Provider: name, Field: "endpoint", Message: path + ": set base_url or endpoint, not both"}
		}
		if p.Endpoint != "" {
			s.BaseURL = p.Endpoint
		}
		if p.Timeout < 0 || math.IsInf(p.Timeout, 0) {
			return nil, &ConfigError{Provider: name, Field: "timeout", Message: path + ": must be a positive number of seconds"}
		}
		s.Timeout = time.Duration(p.Timeout * float64(time.Second))
		switch cred, isEnv := strings.CutPrefix(p.Credential, "env:"); {
		case p.Credential == "":
		case p.Credential == "none":
			s.NoCredential = true
		case isEnv && envName.MatchString(cred):
			s.Credential = cred
		default:
			return nil, &ConfigError{Provider: name, Field: "credential", Message: path + ": " + badCredential}
		}
		c.Providers[name] = s
	}
	for model, fp := range f.Prices {
		p, err := fp.price(path, model)
		if err != nil {
			return nil, err
		}
		if c.Prices == nil {
			c.Prices = Prices{}
		}
		c.Prices[model] = p
	}
	if c.Default != "" && !validName(c.Default) {
		return nil, &ConfigError{Field: "default", Message: fmt.Sprintf("%s: default must name a provider (got %q)", path, c.Default)}
	}
	return c, nil
}

// badCredential is the one message for a credential that is neither an
// environment variable's name nor none. It never quotes the value: that is
// often a pasted key.
const badCredential = "a credential is env(VARIABLE) (\"env:VARIABLE\" in the file) or none; keys are read from the environment, never written in configuration (the value given is not shown)"

func validName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\n\"'")
}

// ConfigError is a configuration problem, named in the user's words: the
// provider, the field (api, base_url, endpoint, credential, model,
// timeout, headers, structured_output, cache_ttl, provider when none
// could be chosen, config for the file itself) and a message that says how to fix it. It never
// contains a key.
type ConfigError struct {
	Provider string
	Field    string
	Message  string
}

func (e *ConfigError) Error() string {
	if e.Provider == "" {
		return "provider: configuration: " + e.Field + ": " + e.Message
	}
	return "provider " + e.Provider + ": configuration: " + e.Field + ": " + e.Message
}

// Resolved is a provider name resolved through the layers: the options of
// its client and where each field came from.
type Resolved struct {
	Name string
	// Options are ready for [NewClient] (Getenv included).
	Options Options
	// StructuredOutput says whether planners using it are asked for plans
	// in the plan's JSON schema (response_format json_schema).
	StructuredOutput bool
	// SchemaFree says that the schema costs no prompt tokens: the provider
	// is a preset whose server applies it as a sampling grammar (llamacpp,
	// vllm, ollama). Elsewhere it is charged, estimated.
	SchemaFree bool
	// From maps each field that was set (api, base_url, model,
	// credential, timeout, headers, structured_output, cache_ttl) to its
	// source: SourceCall,
	// SourceFile, SourceEnvironment or SourcePreset.
	From map[string]string
}

// Resolve resolves the provider called name: call's settings over the
// configuration file's entry (cfg may be nil), over the environment's
// conventions (getenv may be nil: no environment), over the preset of that
// name, and validates the result. A name that is neither configured nor a
// preset needs at least a base_url. Errors are [*ConfigError]s.
func Resolve(name string, call Settings, cfg *Config, getenv func(string) string) (*Resolved, error) {
	if !validName(name) {
		return nil, &ConfigError{Provider: name, Field: "provider", Message: "a provider name is a non-empty word"}
	}
	layers := []layer{{SourceCall, call}}
	where := "in a configuration file"
	if cfg != nil {
		where = "in " + cfg.Path
		if s, ok := cfg.Providers[name]; ok {
			layers = append(layers, layer{SourceFile, s})
		}
	}
	p, isPreset := presets[name]
	if getenv != nil && p.baseURLEnv != "" {
		if v := getenv(p.baseURLEnv); v != "" {
			switch p.baseURLEnv {
			case "OLLAMA_HOST":
				v = ollamaURL(v)
			case "ANTHROPIC_BASE_URL": // the SDKs' root, without /v1
				if v = strings.TrimRight(v, "/"); !strings.HasSuffix(v, "/v1") {
					v += "/v1"
				}
			}
			layers = append(layers, layer{SourceEnvironment, Settings{BaseURL: v}})
		}
	}
	if isPreset {
		yes := p.structured
		layers = append(layers, layer{SourcePreset, Settings{BaseURL: p.baseURL, Model: p.model, Credential: p.credential,
			NoCredential: p.credential == "", StructuredOutput: &yes, API: p.api}})
	}
	s, from := merge(layers)
	r := &Resolved{Name: name, From: from, StructuredOutput: s.StructuredOutput != nil && *s.StructuredOutput}
	r.SchemaFree = r.StructuredOutput && isPreset && p.schemaFree
	bad := func(field, format string, args ...any) (*Resolved, error) {
		msg := fmt.Sprintf(format, args...)
		if src := from[field]; src != "" && src != SourceCall {
			msg += " (from the " + src + ")"
		}
		return nil, &ConfigError{Provider: name, Field: field, Message: msg}
	}
	if _, ok := DialectNamed(s.API); !ok {
		return bad("api", "must be one of %s (got %q)", strings.Join(APIs(), ", "), s.API)
	}
	if !validTTL(s.CacheTTL) {
		return bad("cache_ttl", "must be 5m or 1h (got %q)", s.CacheTTL)
	}
	if s.BaseURL == "" {
		return bad("base_url", "unknown provider: give its base_url (provider(%s, [base_url(URL)]), --base-url URL, or base_url under [providers.%s] %s), or use a preset: %s",
			name, name, where, strings.Join(PresetNames(), ", "))
	}
	u, err := url.Parse(s.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("base_url", "must be an http or https URL such as http://127.0.0.1:8080/v1")
	}
	if u.User != nil {
		return bad("base_url", "must not carry a user or password: name the key's environment variable in credential")
	}
	if s.Credential != "" && !envName.MatchString(s.Credential) {
		return bad("credential", badCredential)
	}
	if s.Timeout < 0 {
		return bad("timeout", "must be a positive number of seconds")
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return bad("headers", "Authorization is not a header to configure: the key comes from credential(env(VARIABLE))")
		}
	}
	if s.Model == "" && p.needsModel {
		return bad("model", "%s needs a model: give model(M) (or provider(%s, [model(M)])), --model M, or model under [providers.%s] %s",
			name, name, name, where)
	}
	r.Options = Options{API: s.API, BaseURL: s.BaseURL, Model: s.Model, Timeout: s.Timeout, Headers: s.Headers, Getenv: getenv, CacheTTL: s.CacheTTL}
	if cfg != nil {
		r.Options.Prices = cfg.Prices
	}
	if !s.NoCredential {
		r.Options.Credential = s.Credential
	}
	if r.Options.Credential != "" && getenv == nil {
		r.Options.Getenv = func(string) string { return "" } // no environment: the call fails with missing_credential
	}
	return r, nil
}

// ollamaURL turns OLLAMA_HOST (host:port, or a URL) into an API root.
func ollamaURL(v string) string {
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	return strings.TrimRight(v, "/") + "/v1"
}

// DefaultName chooses the provider of a call that names none: the
// configuration file's default, else the first of candidates (lib's
// default_provider/1, in order) whose key is in the environment. With
// neither, the [*ConfigError] (field provider) says how to configure one.
func DefaultName(cfg *Config, candidates []string, getenv func(string) string) (string, error) {
	if cfg != nil && cfg.Default != "" {
		return cfg.Default, nil
	}
	var keys []string
	for _, n := range candidates {
		p, ok := presets[n]
		if !ok || p.credential == "" {
			continue
		}
		if getenv != nil && getenv(p.credential) != "" {
			return n, nil
		}
		keys = append(keys, p.credential)
	}
	file := "$XDG_CONFIG_HOME/rlmpl/providers.toml"
	if cfg != nil {
		file = cfg.Path
	}
	return "", &ConfigError{Field: "provider", Message: fmt.Sprintf(
		"no provider configured: name one with provider(Name) (a preset: %s; or provider(Name, [base_url(URL), ...])) or --provider, set default = \"NAME\" in %s, or export one of %s",
		strings.Join(PresetNames(), ", "), file, strings.Join(keys, ", "))}
}
