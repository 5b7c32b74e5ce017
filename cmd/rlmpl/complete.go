package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
)

// runComplete implements `rlmpl complete`: one bounded completion over a
// context file, as rlm_completion/4 runs it, printing the answer, the
// trajectory and the usage. The flags are the call's own provider
// settings, over the configuration file, the environment and the presets
// (see providers.go).
func runComplete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("complete", flag.ContinueOnError)
	query := fs.String("query", "", "the goal (required)")
	contextFile := fs.String("context-file", "", "the context: a text file (required)")
	pf := providerFlags(fs)
	asJSON := fs.Bool("json", false, "print the value, the trajectory and the usage as one line of JSON")
	const synopsis = "complete --query Q --context-file F [flags]"
	if _, code, ok := parseCommand(fs, synopsis, args, stdout, stderr); !ok {
		return code
	}
	if *query == "" || *contextFile == "" {
		fmt.Fprintf(stderr, "rlmpl complete: --query and --context-file are required\nusage: rlmpl %s\n", synopsis)
		return 2
	}
	text, err := os.ReadFile(*contextFile)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
		return 1
	}
	opts := &host.Options{}
	if err := providerSetup(opts); err != nil {
		return failed(stderr, "rlmpl complete", err)
	}
	h, err := host.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
		return 1
	}
	defer h.Close()
	deps, resolved, err := pf.deps(ctx, h)
	if err != nil {
		return failed(stderr, "rlmpl complete", err)
	}
	handles := handle.New(nil)
	ref, meta, err := handles.RegisterText(string(text), handle.Limits{})
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
		return 1
	}
	deps.Contexts = handles
	out, err := plan.Complete(ctx, plan.Input{Query: *query, Context: plan.ContextRef{Ref: ref, Metadata: meta},
		Providers: []string{resolved.Name}, StructuredOutput: resolved.StructuredOutput}, deps)
	if err != nil {
		if ctx.Err() != nil {
			return 130
		}
		fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := printJSON(stdout, completionView(out)); err != nil {
			fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
			return 1
		}
		return 0
	}
	printCompletion(out, stdout)
	return 0
}

// providerSettings are the provider flags shared by complete and chat.
type providerSettings struct {
	name, baseURL, model, credential *string
}

func providerFlags(fs *flag.FlagSet) providerSettings {
	return providerSettings{
		name:       fs.String("provider", "", "a provider: a preset (openai, anthropic, openrouter, deepseek, ollama, vllm, llamacpp) or one named in providers.toml (default: the configured default)"),
		baseURL:    fs.String("base-url", "", "the provider's API root, such as http://127.0.0.1:8080/v1 (alone: an OpenAI-compatible server that takes no key)"),
		model:      fs.String("model", "", "model name, for the provider and the tokenizer (default: the provider's)"),
		credential: fs.String("credential", "", "the environment variable holding the API key, or none"),
	}
}

// deps resolves the provider the flags name, as a program's
// provider(provider(Name, Settings)) would: a --base-url without
// --provider is an OpenAI-compatible server that takes no key unless
// --credential names one. A key missing from the environment is an error
// here, before a command writes anything, not at its first request.
func (p providerSettings) deps(ctx context.Context, h *host.Host) (plan.Deps, host.Resolved, error) {
	settings := provider.Settings{BaseURL: *p.baseURL, Model: *p.model, NoCredential: *p.credential == "none"}
	if *p.credential != "none" {
		settings.Credential = *p.credential
	}
	name := *p.name
	if *p.baseURL != "" && name == "" {
		name = "openai_compatible"
	}
	deps, r, err := h.ProviderDeps(ctx, name, settings)
	if err == nil && r.Credential != "" && os.Getenv(r.Credential) == "" {
		err = provider.MissingCredential(r.Credential)
	}
	return deps, r, err
}

// configText says what is wrong with a provider's configuration in the
// words of flags and settings, as Prolog's configuration_error does.
func configText(err error) string {
	var ce *provider.ConfigError
	if errors.As(err, &ce) {
		return fmt.Sprintf("configuration_error (%s): %s", ce.Field, ce.Message)
	}
	return err.Error()
}

// printCompletion prints the answer, the trajectory and the usage.
func printCompletion(out *plan.Outcome, stdout io.Writer) {
	fmt.Fprintf(stdout, "%s\n", valueText(out.Value))
	fmt.Fprintln(stdout, "trajectory:")
	for _, e := range out.Trajectory.Events {
		fmt.Fprintf(stdout, "  %d %s %s %s -> %s\n", e.Seq, e.Op, e.Status, e.Input, e.Output)
	}
	var usage map[string]any
	b, _ := json.Marshal(out.Usage)
	_ = json.Unmarshal(b, &usage)
	keys := make([]string, 0, len(usage))
	for k := range usage {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, usage[k])
	}
	fmt.Fprintf(stdout, "usage: %s\n", strings.Join(parts, " "))
}

// valueText renders a completion's value for people: text as itself,
// anything else in the canonical JSON the runtime stores (plan.Encode).
func valueText(v any) string {
	if s, isText := v.(string); isText {
		return s
	}
	return plan.Encode(v)
}
