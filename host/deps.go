package host

import (
	"context"

	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/host/provider"
)

// ProviderDeps are the planner and the models through which a Go caller
// (the CLI's chat, an embedding program) reaches a provider, resolved as
// rlm_completion/4 resolves provider(P) (Host.Provider: name "" is the
// default; call holds the caller's own settings, such as flags): the
// planner at temperature 0, plans in either syntax. The caller adds the
// context registry, names r.Name in plan.Input.Providers and sets
// plan.Input.StructuredOutput to r.StructuredOutput. A configuration
// error is returned, and is also what every call of the deps returns, so
// that a caller may report it first or let the first call fail.
func (h *Host) ProviderDeps(ctx context.Context, name string, call provider.Settings) (plan.Deps, Resolved, error) {
	r, err := h.Provider(ctx, name, call)
	if err != nil {
		return plan.Deps{Models: unresolved{err}, Planner: unresolved{err}, Terms: planterm.Reader{}}, Resolved{Name: name}, err
	}
	pm := providerModels{r: r}
	return plan.Deps{Models: pm, Planner: providerPlanner{models: pm}, Terms: planterm.Reader{}}, r, nil
}
