// Package provider is the model provider boundary: the [Provider]
// interface the completion engine calls, responses, an HTTP client
// ([Client]) in one of two wire formats ([Dialect]: chat completions and
// Anthropic's Messages API), and test doubles ([Scripted], [Recorder],
// [Replayer]). It does not import the Prolog engine; host converts its
// values to and from terms.
//
// Requests are [tokenizer.Request] values: the one request type that the
// packer renders, the tokenizer counts and this package sends, so that what
// is counted is what is sent.
//
// # What it owns
//
//   - Sending a request: its validation ([Validate]), generation options
//     given as generic values ([ApplyOptions]), and its exact body bytes
//     in the client's dialect ([Dialect.Body]; [Body] is chat
//     completions': the request's wire JSON plus the stream fields).
//     Every [Response] of a successful call carries the bytes sent in
//     RequestBody, and every attempt ([WithAttemptTrace]) the dialect and
//     the request they encode, for a turn receipt to hash and replay.
//   - The dialects: [OpenAIChat] and [AnthropicMessages] (system blocks,
//     content blocks, tool_use and tool_result pairing, input_schema,
//     images, cache_control at the request's breakpoints, max_tokens
//     always, its event stream, stop reasons, thinking, its usage with
//     cache reads and writes, its errors).
//   - Response normalization across OpenAI-compatible dialects (OpenAI,
//     OpenRouter, DeepSeek, vLLM, Ollama, llama.cpp's llama-server) into
//     one [Response]: content as text or parts, reasoning from
//     reasoning_content or reasoning, tool calls with string or object
//     arguments, a [Usage] whose unknown fields are explicit (Known flags)
//     and never read as 0, and OpenRouter's usage.cost.
//   - Structured failures: every error from a provider is an [*Error] with a
//     [Kind], the HTTP status, the provider's error code and type, and
//     whether it is retryable; a prompt refused as too long is
//     [KindContextLength], with the counts the provider stated. [ErrMissingCredential] is wrapped by the
//     missing-credential error; a canceled call unwraps to ctx.Err().
//   - Presets ([Preset]) for the known endpoints (openai, anthropic,
//     openrouter, deepseek, ollama, vllm, llamacpp).
//   - Configuration in layers ([Resolve]): a call's [Settings] over a
//     configuration file ([ParseConfig], TOML) over the environment's
//     conventions (OPENAI_BASE_URL, OLLAMA_HOST) over the preset, field
//     by field; the default provider ([DefaultName]); problems as
//     [*ConfigError]s in the words users write (base_url, credential,
//     model), never a Go field, never a key.
//   - Server-sent-event streaming ([Provider.Stream]) with usage
//     (stream_options.include_usage) and tool-call deltas assembled by
//     index.
//
// Budgets built on [Usage] must treat an unknown field as unknown (refuse,
// estimate, or stop), never as zero: upstream never enforced unknown usage
// (upstream-contract §7.1 item 10), and the Known flags exist so that the
// completion engine can.
//
// It leaves to the caller: reading the configuration file and the
// environment (the CLI reads both and passes bytes and a Getenv), prompt
// construction, budgets, and any retry that is a policy decision rather
// than a transport one (a planner re-prompted after a bad plan).
//
// # Credentials
//
// [Options].Credential is the name of an environment variable, never a key;
// a value that is not a variable name is rejected without being echoed. The
// key is read through the injected Options.Getenv at the start of every
// call (so a rotated key takes effect without a restart), sent only as the
// Authorization header (anthropic: x-api-key), and never kept: it is absent from the client, its
// String(), every error text (anything a server echoes back is replaced by
// "<redacted>") and every recording. An unset or empty variable fails the
// call before anything is sent. Authorization cannot be set through
// Options.Headers, and every Options.Headers value is treated as a secret
// too (X-Api-Key and the like carry keys): it is redacted wherever the
// key is.
//
// # Retries and timeouts
//
// Options.Timeout bounds one HTTP attempt (for a stream, the wait for each
// line, so long generations are not cut). A retryable failure (429, 408,
// 409, 5xx with Anthropic's 529 overloaded_error, a transport error, a
// timeout) is retried up to
// Options.MaxRetries times with exponential backoff and jitter, waiting at
// least the server's Retry-After (or retry-after-ms). The error is returned
// instead when the server asks for longer than Options.RetryMaxDelay, when
// the wait would outlive ctx's deadline, or when a stream has already
// delivered deltas. Cancellation always wins: a done ctx ends the call, or
// the backoff wait, at once with [KindCanceled].
//
// # Concurrency
//
// A [Client] is immutable after [NewClient] and safe for concurrent use; share one per provider configuration. [Scripted], [Recorder] and
// [Replayer] are safe for concurrent use once configured. Stream callbacks
// run on the calling goroutine. The package starts no goroutines of its own
// beyond net/http's.
//
// # Usage
//
//	p, err := provider.NewClient(&provider.Options{
//		BaseURL:    "https://openrouter.ai/api/v1",
//		Model:      "openrouter/free",
//		Credential: "OPENROUTER_API_KEY",
//		Getenv:     os.Getenv,
//		Headers:    map[string]string{"X-Title": "rlmpl"},
//	})
//	if err != nil {
//		return err
//	}
//	resp, err := p.Complete(ctx, tokenizer.Request{
//		Messages:    []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "Say hi."}},
//		MaxTokens:   64,
//		Temperature: new(0.0),
//	})
//	var perr *provider.Error
//	switch {
//	case errors.As(err, &perr) && perr.Kind == provider.KindCanceled:
//		return err // a control signal: the caller's ctx ended
//	case err != nil:
//		return fmt.Errorf("planner: %w", err) // perr.Kind, Status, Code, Retryable
//	}
//	fmt.Println(resp.Content, resp.Usage) // Usage prints "?" for unknown fields
//
// Tests use [Scripted] (a queue of responses, recording every request) or
// replay with [Replayer] a recording made once against a real server with
// [Recorder]. Package providertest serves scripted HTTP answers for tests
// that need the real client (or the CLI) on the wire.
package provider
