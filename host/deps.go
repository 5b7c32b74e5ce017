package host

import (
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
)

// CompletionDeps are the planner and the models through which a Go caller
// (the CLI's chat, an embedding program) reaches the provider named
// providerName, as rlm_completion/4 does with provider(P): the planner at
// temperature 0, model steps with model ("" for the provider's default),
// plans in either syntax. The caller adds the context registry.
func (h *Host) CompletionDeps(providerName, model string) plan.Deps {
	pm := providerModels{host: h, model: model}
	return plan.Deps{Models: pm, Planner: providerPlanner{models: pm, provider: providerName}, Terms: planterm.Reader{}}
}
