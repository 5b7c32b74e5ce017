package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

const testKey = "sk-cli-SECRET-51e0c7d9a2"

// isolate gives the test an empty configuration directory and environment
// for the conventions providers read, so the machine's own settings do not
// leak in. It returns the configuration directory.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "OLLAMA_HOST", "OPENROUTER_TEST_MODEL"} {
		t.Setenv(v, "")
	}
	return dir
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunReadsKeysAtRequestTime: a script run by `rlmpl run` reaches a
// cloud preset moved by OPENAI_BASE_URL with the key of OPENAI_API_KEY in
// its Authorization header, and sends none with credential(none). The key
// is in no output, not even when the server echoes it in an error.
func TestRunReadsKeysAtRequestTime(t *testing.T) {
	isolate(t)
	srv := providertest.NewServer(
		providertest.Completion("hello from openai", 5, 2),
		providertest.Completion("hello from local", 5, 2),
		providertest.Reply(401, `{"error":{"message":"invalid key `+testKey+`","type":"auth","code":"invalid_api_key"}}`),
	)
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_API_KEY", testKey)
	script := writeFile(t, filepath.Join(t.TempDir(), "keys.pl"), `
:- initialization(main, main).
text_of(ok(llm_result(R)), T) :- memberchk(response(model_response(F)), R), memberchk(text(T0), F), atom_chars(T, T0).
main :-
    llm_query("hi", [provider(openai), model('gpt-4o')], O1), text_of(O1, T1), write(T1), nl,
    llm_query("hi", [provider(provider(local, [base_url("`+srv.BaseURL()+`"), credential(none)]))], O2), text_of(O2, T2), write(T2), nl,
    llm_query("hi", [provider(openai), model('gpt-4o')], error(E)), print(E), nl.
`)
	out, errOut, code := rlmpl(t, "run", script)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "hello from openai\nhello from local\nprovider_error(") {
		t.Fatalf("stdout: %s", out)
	}
	reqs := srv.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("openai request Authorization = %q, want the key of OPENAI_API_KEY", got)
	}
	if got, has := reqs[1].Header["Authorization"]; has {
		t.Errorf("credential(none) request sent Authorization %q", got)
	}
	if reqs[0].Body["model"] != "gpt-4o" {
		t.Errorf("model = %v", reqs[0].Body["model"])
	}
	if strings.Contains(out+errOut, testKey) || !strings.Contains(out, "<redacted>") {
		t.Errorf("the key leaked or was not redacted: %s %s", out, errOut)
	}
}

// TestCompleteBaseURLAlone: --base-url without --provider talks to a local
// server with no key and no model, even when keys are in the environment.
func TestCompleteBaseURLAlone(t *testing.T) {
	isolate(t)
	t.Setenv("OPENROUTER_API_KEY", testKey)
	t.Setenv("OPENAI_API_KEY", testKey)
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"local ok"}]}`, 10, 5))
	defer srv.Close()
	ctxFile := writeFile(t, filepath.Join(t.TempDir(), "c.txt"), "some text")
	out, errOut, code := rlmpl(t, "complete", "--query", "q", "--context-file", ctxFile, "--base-url", srv.BaseURL())
	if code != 0 || !strings.HasPrefix(out, "local ok\n") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	req := srv.Requests()[0]
	if _, has := req.Header["Authorization"]; has {
		t.Errorf("a key was sent to the local server")
	}
	if _, has := req.Body["model"]; has {
		t.Errorf("a model was sent: %s", req.Raw)
	}
}

// TestProviderPrecedenceCLI: flags over the configuration file, the file
// over the environment, the environment over the preset.
func TestProviderPrecedenceCLI(t *testing.T) {
	cfgDir := isolate(t)
	plan := `{"steps":[{"op":"final","value":"ok"}]}`
	fileSrv := providertest.NewServer(providertest.Completion(plan, 1, 1))
	defer fileSrv.Close()
	envSrv := providertest.NewServer(providertest.Completion(plan, 1, 1))
	defer envSrv.Close()
	flagSrv := providertest.NewServer(providertest.Completion(plan, 1, 1))
	defer flagSrv.Close()
	ctxFile := writeFile(t, filepath.Join(t.TempDir(), "c.txt"), "text")
	t.Setenv("OPENAI_BASE_URL", envSrv.BaseURL())
	t.Setenv("OPENAI_API_KEY", testKey)
	complete := func(extra ...string) {
		t.Helper()
		_, errOut, code := rlmpl(t, append([]string{"complete", "--query", "q", "--context-file", ctxFile}, extra...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	// Environment over preset: openai goes to OPENAI_BASE_URL.
	complete("--provider", "openai", "--model", "gpt-4o")
	// The file over the environment, and it names the default.
	writeFile(t, filepath.Join(cfgDir, "rlmpl", "providers.toml"), `
default = "openai"
[providers.openai]
base_url = "`+fileSrv.BaseURL()+`"
model = "gpt-file"
`)
	complete()
	// Flags over the file.
	complete("--provider", "openai", "--base-url", flagSrv.BaseURL(), "--model", "gpt-flag")
	got := func(s *providertest.Server) []string {
		var ms []string
		for _, r := range s.Requests() {
			ms = append(ms, r.Body["model"].(string)+" "+r.Header.Get("Authorization"))
		}
		return ms
	}
	want := "Bearer " + testKey
	if g := got(envSrv); len(g) != 1 || g[0] != "gpt-4o "+want {
		t.Errorf("environment server got %v", g)
	}
	if g := got(fileSrv); len(g) != 1 || g[0] != "gpt-file "+want {
		t.Errorf("file server got %v", g)
	}
	if g := got(flagSrv); len(g) != 1 || g[0] != "gpt-flag "+want {
		t.Errorf("flag server got %v", g)
	}
}

// TestProviderConfigurationErrorsCLI: errors speak flags and settings, not
// Go fields, and never show a key.
func TestProviderConfigurationErrorsCLI(t *testing.T) {
	cfgDir := isolate(t)
	ctxFile := writeFile(t, filepath.Join(t.TempDir(), "c.txt"), "text")
	cases := []struct {
		name  string
		file  string
		args  []string
		wants []string
	}{
		{"nothing configured", "", nil, []string{"configuration_error (provider)", "--provider", "OPENAI_API_KEY", "providers.toml"}},
		{"no model", "", []string{"--provider", "openai"}, []string{"configuration_error (model)", "--model"}},
		{"missing key", "", []string{"--provider", "openai", "--model", "gpt-4o"}, []string{"missing_credential", "OPENAI_API_KEY"}},
		{"key as credential", "", []string{"--base-url", "http://127.0.0.1:9/v1", "--credential", testKey}, []string{"configuration_error (credential)"}},
		{"key in the file", "[providers.x]\napi_key = \"" + testKey + "\"\n", nil, []string{"credential", "keys are never configuration"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(cfgDir, "rlmpl", "providers.toml")
			os.Remove(path)
			if tc.file != "" {
				writeFile(t, path, tc.file)
			}
			out, errOut, code := rlmpl(t, append([]string{"complete", "--query", "q", "--context-file", ctxFile}, tc.args...)...)
			if code == 0 {
				t.Fatalf("exit 0: %s", out)
			}
			for _, w := range tc.wants {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q: %s", w, errOut)
				}
			}
			if strings.Contains(errOut, testKey) || strings.Contains(errOut, "Options.") {
				t.Errorf("stderr leaks a key or a Go field: %s", errOut)
			}
		})
	}
}

// TestProvidersCommand: `rlmpl providers` shows each provider as it
// resolves, where each setting comes from and whether its key is set, but
// never the key.
func TestProvidersCommand(t *testing.T) {
	cfgDir := isolate(t)
	writeFile(t, filepath.Join(cfgDir, "rlmpl", "providers.toml"), "default = \"local\"\n[providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\ncredential = \"env:LOCAL_KEY\"\n[providers.openai]\nmodel = \"gpt-file\"\n")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:7/v1")
	t.Setenv("OPENAI_API_KEY", testKey)
	out, errOut, code := rlmpl(t, "providers")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"http://127.0.0.1:9/v1 (file)", "LOCAL_KEY (unset)", "http://127.0.0.1:7/v1 (environment)",
		"gpt-file (file)", "OPENAI_API_KEY (set)", "ollama      http://127.0.0.1:11434/v1 (preset)", "default: local\n",
		"anthropic   https://api.anthropic.com/v1 (preset)  claude-sonnet-4-5 (preset)  ANTHROPIC_API_KEY (unset)   false       anthropic\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, testKey) {
		t.Errorf("the key leaked:\n%s", out)
	}
}

// TestConfigurationErrorsExit2: one rule for every command: a broken
// configuration file — a key written in providers.toml, a TOML syntax
// error, an unknown key, in providers.toml or config.toml — is a
// configuration error, exit 2, with the file named, nothing written and
// no key shown.
func TestConfigurationErrorsExit2(t *testing.T) {
	cfgDir := isolate(t)
	script := writeFile(t, filepath.Join(t.TempDir(), "s.pl"), ":- initialization(main, main).\nmain :- write(ran), nl.\n")
	ctxFile := writeFile(t, filepath.Join(t.TempDir(), "c.txt"), "text")
	files := []struct{ name, file, text, want string }{
		{"key in providers.toml", "providers.toml", "[providers.x]\napi_key = \"" + testKey + "\"\n", "keys are never configuration"},
		{"providers.toml syntax", "providers.toml", "[providers.x\nmodel = \"m\"\n", "to end table name"},
		{"providers.toml unknown key", "providers.toml", "[providers.x]\nmodle = \"m\"\n", "unknown key providers.x.modle"},
		{"config.toml syntax", "config.toml", "store = \n", "config.toml"},
		{"config.toml unknown key", "config.toml", "stor = \"x\"\n", `unknown key "stor"`},
	}
	commands := [][]string{
		{"run", script},
		{"repl"},
		{"chat", "--conv", "c", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"},
		{"complete", "--query", "q", "--context-file", ctxFile, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"},
		{"providers"},
		{"warm", "list", "--conv", "c"},
		{"conv", "list"},
	}
	for _, f := range files {
		for _, args := range commands {
			if f.file == "providers.toml" && args[0] == "conv" {
				continue // conv reads no provider
			}
			if f.file == "config.toml" && (args[0] == "providers" || args[0] == "complete" || args[0] == "run" || args[0] == "repl") {
				continue // no store: config.toml is not read
			}
			t.Run(f.name+"/"+args[0], func(t *testing.T) {
				for _, n := range []string{"providers.toml", "config.toml"} {
					os.Remove(filepath.Join(cfgDir, "rlmpl", n))
				}
				writeFile(t, filepath.Join(cfgDir, "rlmpl", f.file), f.text)
				state := t.TempDir()
				t.Setenv("XDG_STATE_HOME", state)
				out, errOut, code := rlmpl(t, args...)
				if code != 2 {
					t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errOut)
				}
				if !strings.Contains(errOut, f.want) || !strings.Contains(errOut, f.file) {
					t.Errorf("stderr lacks %q or the file: %s", f.want, errOut)
				}
				if strings.Contains(errOut, testKey) {
					t.Errorf("stderr shows the key: %s", errOut)
				}
				if entries, _ := os.ReadDir(state); len(entries) > 0 {
					t.Errorf("the state directory holds %v: a configuration error writes nothing", entries)
				}
			})
		}
	}
}

// TestAgentExample runs docs/providers.md's agent.pl as a user would: a
// plan whose final value is not text is printed as stored (JSON), and the
// agent goes on to the next line; with no provider, a failed turn prints
// one line of cause, and the whole error term with the verbose argument.
func TestAgentExample(t *testing.T) {
	cfgDir := isolate(t)
	doc, err := os.ReadFile("../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```prolog\n(% agent.pl .*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/providers.md has no agent.pl")
	}
	agent := writeFile(t, filepath.Join(t.TempDir(), "agent.pl"), string(m[1]))
	srv := providertest.NewServer(
		providertest.Completion(`{"steps":[{"op":"final","value":{"host":"db","port":8443}}]}`, 10, 5),
		providertest.Completion(`{"steps":[{"op":"final","value":"port 8443"}]}`, 10, 5))
	defer srv.Close()
	writeFile(t, filepath.Join(cfgDir, "rlmpl", "providers.toml"),
		"[providers.local]\nbase_url = \""+srv.BaseURL()+"\"\ncredential = \"none\"\nmodel = \"tiny\"\n")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", agent}, strings.NewReader("where is the database?\nand its port?\n"), &stdout, &stderr)
	if want := "{\"host\":\"db\",\"port\":8443}\nport 8443\n"; code != 0 || stdout.String() != want {
		t.Fatalf("exit %d, stdout %q, want %q; stderr:\n%s", code, stdout.String(), want, stderr.String())
	}

	os.Remove(filepath.Join(cfgDir, "rlmpl", "providers.toml"))
	for _, verbose := range []bool{false, true} {
		args := []string{"run", agent}
		if verbose {
			args = append(args, "verbose")
		}
		stdout.Reset()
		stderr.Reset()
		code := run(context.Background(), args, strings.NewReader("hello\n"), &stdout, &stderr)
		errs := stderr.String()
		lines := strings.Count(errs, "\n")
		switch {
		case code != 0:
			t.Errorf("verbose=%v: exit %d: %s", verbose, code, errs)
		case !verbose && (lines != 1 || len(errs) > 400 || !strings.Contains(errs, "ERROR: planner_error: ") || !strings.Contains(errs, "unknown provider")):
			t.Errorf("a failed turn prints %d lines, %d bytes, want one line of cause:\n%s", lines, len(errs), errs)
		case verbose && !strings.Contains(errs, "token_ledger("):
			t.Errorf("verbose: want the whole error term, got:\n%s", errs)
		}
	}
}
