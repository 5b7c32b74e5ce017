package provider

import "sort"

// preset is a known provider's defaults.
type preset struct {
	baseURL, credential, model string
}

// presets are the endpoints the package is tested against (wire shapes
// in the tests; llama-server end to end). Local servers take no credential.
var presets = map[string]preset{
	"openai":     {"https://api.openai.com/v1", "OPENAI_API_KEY", ""},
	"openrouter": {"https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "openrouter/free"},
	"deepseek":   {"https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat"},
	"ollama":     {"http://127.0.0.1:11434/v1", "", ""},
	"vllm":       {"http://127.0.0.1:8000/v1", "", ""},
	"llamacpp":   {"http://127.0.0.1:8080/v1", "", ""},
}

// Preset returns the Options of a known provider by name (openai,
// openrouter, deepseek, ollama, vllm, llamacpp): BaseURL, the conventional
// Credential variable and a default Model where there is an obvious one.
// The caller still sets Getenv (and may override any field). ok is false
// for an unknown name.
func Preset(name string) (o Options, ok bool) {
	p, ok := presets[name]
	if !ok {
		return Options{}, false
	}
	return Options{BaseURL: p.baseURL, Credential: p.credential, Model: p.model}, true
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
