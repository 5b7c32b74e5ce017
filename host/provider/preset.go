package provider

import "sort"

// preset is a known provider's defaults and the environment conventions its
// users already have.
type preset struct {
	api, baseURL, credential, model string
	// baseURLEnv names the variable that moves the API root (OPENAI_BASE_URL
	// for openai, OLLAMA_HOST for ollama), "" when there is no convention.
	baseURLEnv string
	// structured: the server honours response_format json_schema (it
	// constrains sampling with it), so planners are asked for schema plans.
	structured bool
	// schemaFree: the server turns that schema into a sampling grammar and
	// shows the model none of it, so it costs no prompt tokens (llama.cpp,
	// vLLM, Ollama). OpenAI's counts it, by a rule it does not publish.
	schemaFree bool
	// needsModel: the server refuses a request without a model, so a
	// missing one is a configuration error before anything is sent.
	needsModel bool
}

// presets are the endpoints the package is tested against (wire shapes in
// the tests; llama-server end to end). Local servers take no credential.
// Anthropic's API takes no response_format, so its planners are asked
// for plans in text.
// DeepSeek documents json_object only; OpenRouter passes response_format
// to models that may ignore it, so both leave structured output off unless
// configured.
var presets = map[string]preset{
	"openai":     {baseURL: "https://api.openai.com/v1", credential: "OPENAI_API_KEY", baseURLEnv: "OPENAI_BASE_URL", structured: true, needsModel: true},
	"anthropic":  {api: APIAnthropic, baseURL: "https://api.anthropic.com/v1", credential: "ANTHROPIC_API_KEY", model: "claude-sonnet-4-5", baseURLEnv: "ANTHROPIC_BASE_URL", needsModel: true},
	"openrouter": {baseURL: "https://openrouter.ai/api/v1", credential: "OPENROUTER_API_KEY", model: "openrouter/free", needsModel: true},
	"deepseek":   {baseURL: "https://api.deepseek.com/v1", credential: "DEEPSEEK_API_KEY", model: "deepseek-chat", needsModel: true},
	"ollama":     {baseURL: "http://127.0.0.1:11434/v1", baseURLEnv: "OLLAMA_HOST", structured: true, schemaFree: true, needsModel: true},
	"vllm":       {baseURL: "http://127.0.0.1:8000/v1", structured: true, schemaFree: true},
	"llamacpp":   {baseURL: "http://127.0.0.1:8080/v1", structured: true, schemaFree: true},
}

// Preset returns the Options of a known provider by name (openai,
// anthropic, openrouter, deepseek, ollama, vllm, llamacpp): its API, the
// BaseURL, the conventional Credential variable and a default Model where
// there is an obvious one.
// The caller still sets Getenv (and may override any field). ok is false
// for an unknown name. [Resolve] layers configuration and the environment
// over it.
func Preset(name string) (o Options, ok bool) {
	p, ok := presets[name]
	if !ok {
		return Options{}, false
	}
	return Options{API: p.api, BaseURL: p.baseURL, Credential: p.credential, Model: p.model}, true
}

// PresetNames returns the names [Preset] knows, sorted. The caller owns the
// slice.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
