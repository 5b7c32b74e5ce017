package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Server is the configuration of one MCP server: a command run over stdio
// (Command, Args, Env) or a Streamable HTTP endpoint (URL, Headers,
// Credential). Exactly one of Command and URL is set.
type Server struct {
	// Name is how grants, the CLI and receipts name the server: a letter
	// or digit, then letters, digits, '-' and '_' (never "__", which
	// separates it from a tool's name in the names a model sees), at most
	// 32 bytes.
	Name string
	// Command and Args start a stdio server. Its environment is
	// Options.Environ with Env over it.
	Command string
	Args    []string
	Env     map[string]string
	// URL is a Streamable HTTP endpoint. Headers are sent with every
	// request; a value "env:VARIABLE" is read from the environment when the
	// server is connected. Every header value is a secret: no error, log or
	// listing shows it. Credential names the environment variable holding
	// a bearer token, sent as the Authorization header (which Headers may
	// not set).
	URL        string
	Headers    map[string]string
	Credential string
	// Timeout bounds each request to the server (a tool list, a call).
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// StartTimeout bounds starting and initializing the server (npx may
	// download a package first). Zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxToolTokens is the server's ceiling: the granted tools' definitions,
	// counted as the request renders them, may take at most this many
	// tokens, or the turn fails saying so ([*CeilingError]). Zero means
	// DefaultMaxToolTokens.
	MaxToolTokens int64
	// StartWithSession starts the server when its session starts (Servers
	// Start) instead of at first use.
	StartWithSession bool
}

// Defaults of [Server]'s zero fields.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultStartTimeout  = 60 * time.Second
	DefaultMaxToolTokens = 8192
)

// withDefaults is s with its zero fields filled in.
func (s Server) withDefaults() Server {
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	if s.MaxToolTokens == 0 {
		s.MaxToolTokens = DefaultMaxToolTokens
	}
	return s
}

// Transport is how the server is reached: "stdio" or "http".
func (s Server) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// String renders the server without secrets: header values and the
// environment's values are left out.
func (s Server) String() string {
	if s.URL != "" {
		keys := slices.Sorted(maps.Keys(s.Headers))
		return fmt.Sprintf("%s: http %s (headers %v, credential %q)", s.Name, s.URL, keys, s.Credential)
	}
	return fmt.Sprintf("%s: stdio %s %q (env %v)", s.Name, s.Command, s.Args, slices.Sorted(maps.Keys(s.Env)))
}

var (
	serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Validate checks the configuration. Errors are [*ConfigError]s naming
// the field; none quotes a header value.
func (s Server) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Server: s.Name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case !serverName.MatchString(s.Name) || strings.Contains(s.Name, "__"):
		return bad("name", "a server name is a letter or digit, then letters, digits, - and _ (not __), at most 32 bytes (got %q)", s.Name)
	case s.Command == "" && s.URL == "":
		return bad("command", "give a command (a stdio server) or a url (a Streamable HTTP server)")
	case s.Command != "" && s.URL != "":
		return bad("url", "give a command or a url, not both")
	case s.Timeout < 0:
		return bad("timeout", "must be a positive number of seconds")
	case s.StartTimeout < 0:
		return bad("start_timeout", "must be a positive number of seconds")
	case s.MaxToolTokens < 0:
		return bad("max_tool_tokens", "must be a positive number of tokens")
	}
	if s.Command != "" {
		if len(s.Headers) > 0 || s.Credential != "" {
			return bad("headers", "headers and credential are for a url; a stdio server reads its environment (env)")
		}
		for k := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return bad("env", "%q is not an environment variable name", k)
			}
		}
		return nil
	}
	if len(s.Env) > 0 {
		return bad("env", "env is for a stdio server (command); a url takes headers")
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("url", "must be an http or https URL such as http://127.0.0.1:8000/mcp")
	}
	if u.User != nil {
		return bad("url", "must not carry a user or password: name the token's environment variable in credential")
	}
	for k, v := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return bad("headers", "Authorization is not a header to configure: the token comes from credential = \"env:VARIABLE\"")
		}
		if name, isEnv := strings.CutPrefix(v, "env:"); isEnv && !envName.MatchString(name) {
			return bad("headers", "header %s: \"env:\" must be followed by an environment variable name (the value is not shown)", k)
		}
	}
	if s.Credential != "" && !envName.MatchString(s.Credential) {
		return bad("credential", badCredential)
	}
	return nil
}

// badCredential never quotes the value: it is often a pasted token.
const badCredential = "a credential is \"env:VARIABLE\", the environment variable holding a bearer token; tokens are never written in configuration (the value given is not shown)"

// ConfigError is a configuration problem in the words a user writes: the
// server, the field (command, url, headers, credential, env, timeout,
// start_timeout, max_tool_tokens, start, name, or config for the file)
// and how to fix it. It never contains a secret.
type ConfigError struct {
	Server  string
	Field   string
	Message string
}

func (e *ConfigError) Error() string {
	if e.Server == "" {
		return "mcp: configuration: " + e.Field + ": " + e.Message
	}
	return "mcp server " + e.Server + ": configuration: " + e.Field + ": " + e.Message
}

// fileServer is the TOML shape of one [mcp.NAME] table.
type fileServer struct {
	Command       string            `toml:"command"`
	Args          []string          `toml:"args"`
	Env           map[string]string `toml:"env"`
	URL           string            `toml:"url"`
	Headers       map[string]string `toml:"headers"`
	Credential    string            `toml:"credential"`
	Timeout       float64           `toml:"timeout"`
	StartTimeout  float64           `toml:"start_timeout"`
	MaxToolTokens int64             `toml:"max_tool_tokens"`
	Start         string            `toml:"start"`
}

// secretKeys are keys people write when they paste a token into a file.
var secretKeys = []string{"api_key", "apikey", "key", "token", "secret", "password", "authorization"}

// ParseConfig reads the [mcp.NAME] tables of a configuration file (TOML;
// the CLI's providers.toml, whose other tables are host/provider's):
//
//	[mcp.everything]                          # a stdio server
//	command = "npx"
//	args = ["-y", "@modelcontextprotocol/server-everything@2026.8.31"]
//	env = { LOG_LEVEL = "warn" }              # over the caller's environment
//	start = "session"                         # or "first_use" (the default)
//	timeout = 30                              # seconds, each request
//	start_timeout = 60                        # seconds, start and initialize
//	max_tool_tokens = 8192                    # the ceiling of its definitions
//
//	[mcp.tracker]                             # a Streamable HTTP server
//	url = "https://mcp.example.com/mcp"
//	credential = "env:TRACKER_TOKEN"          # Authorization: Bearer $TRACKER_TOKEN
//	headers = { "X-Team" = "env:TRACKER_TEAM" }
//
// Other top-level tables and keys are ignored. path names the file in
// messages. Errors are [*ConfigError]s; a token written where a credential
// belongs is refused without being echoed.
func ParseConfig(path string, data []byte) (map[string]Server, error) {
	var f struct {
		MCP map[string]fileServer `toml:"mcp"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// NB: not pe.ErrorWithPosition(): it quotes the line, which may
			// hold a pasted token.
			return nil, &ConfigError{Field: "config", Message: fmt.Sprintf("%s:%d: %s", path, pe.Position.Line, pe.Message)}
		}
		return nil, &ConfigError{Field: "config", Message: fmt.Sprintf("%s: %v", path, err)}
	}
	if typ := md.Type("mcp"); typ != "" && typ != "Hash" {
		return nil, &ConfigError{Field: "config", Message: fmt.Sprintf("%s: mcp must hold tables ([mcp.NAME])", path)}
	}
	for _, k := range md.Undecoded() {
		if len(k) < 2 || k[0] != "mcp" {
			continue // another package's key
		}
		if len(k) == 2 {
			return nil, &ConfigError{Field: "config", Message: fmt.Sprintf("%s: mcp.%s must be a table ([mcp.%s])", path, k[1], k[1])}
		}
		if slices.Contains(secretKeys, strings.ToLower(k[2])) {
			return nil, &ConfigError{Server: k[1], Field: "credential", Message: fmt.Sprintf(
				"%s: mcp.%s.%s: tokens are never configuration: name the environment variable that holds it (credential = \"env:VARIABLE\")", path, k[1], k[2])}
		}
		return nil, &ConfigError{Server: k[1], Field: k[2], Message: fmt.Sprintf("%s: unknown key %s", path, k.String())}
	}
	out := make(map[string]Server, len(f.MCP))
	for name, fs := range f.MCP {
		s := Server{Name: name, Command: fs.Command, Args: fs.Args, Env: fs.Env, URL: fs.URL, Headers: fs.Headers, MaxToolTokens: fs.MaxToolTokens}
		for _, d := range []struct {
			field string
			secs  float64
			dst   *time.Duration
		}{{"timeout", fs.Timeout, &s.Timeout}, {"start_timeout", fs.StartTimeout, &s.StartTimeout}} {
			if d.secs < 0 || math.IsInf(d.secs, 0) || math.IsNaN(d.secs) {
				return nil, &ConfigError{Server: name, Field: d.field, Message: path + ": must be a positive number of seconds"}
			}
			*d.dst = time.Duration(d.secs * float64(time.Second))
		}
		switch cred, isEnv := strings.CutPrefix(fs.Credential, "env:"); {
		case fs.Credential == "":
		case isEnv && envName.MatchString(cred):
			s.Credential = cred
		default:
			return nil, &ConfigError{Server: name, Field: "credential", Message: path + ": " + badCredential}
		}
		switch fs.Start {
		case "", "first_use":
		case "session":
			s.StartWithSession = true
		default:
			return nil, &ConfigError{Server: name, Field: "start", Message: fmt.Sprintf("%s: must be \"session\" or \"first_use\" (got %q)", path, fs.Start)}
		}
		if err := s.Validate(); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				ce.Message = path + ": " + ce.Message
			}
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}
