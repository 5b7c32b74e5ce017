package tokenizer

import (
	"cmp"
	"strings"
)

// ImageRule is what an image content part costs a model. The pixels are
// never seen here (a part holds a URL), so only a cost that does not depend
// on the image's size can be exact: OpenAI's fixed cost of an image sent
// with detail "low". Everything else is charged the rule's upper bound and
// labelled [Estimated].
type ImageRule struct {
	// Low is the published fixed cost of an image with detail "low", or 0
	// when the model family publishes none. Such an image is counted Exact.
	Low int
	// Max bounds what any one image costs the model, whatever its size and
	// detail. Zero means [DefaultImageMax].
	Max int
}

// DefaultImageMax is the bound charged per image when the model's image
// rule is unknown. It is above every per-image maximum OpenAI publishes
// except gpt-4o-mini's, which has its own rule (the largest is gpt-4.1-nano's
// 3,779: 1,536 patches × 2.46), and above Anthropic's (about 1,600). Models
// with dynamic resolution (some open-weight vision models) can use more: give
// them a [Framing].Images rule.
const DefaultImageMax = 4096

// imageRules are the image rules OpenAI publishes for its tile-based
// families (images and vision guide, "Calculating costs"), by model-name
// prefix, the longest winning. A tile model scales an image into 2048×2048,
// then its shortest side down to 768, and charges a base plus a cost per
// 512-px tile, so at most 2×4 tiles: gpt-4o, gpt-4.1, gpt-4.5 and
// gpt-4-turbo charge 85 + 170 per tile (at most 1,445), gpt-4o-mini
// 2,833 + 5,667 per tile (at most 48,169); detail "low" is the base alone.
// gpt-4.1-mini and gpt-4.1-nano charge 32-px patches (at most 1,536) times
// 1.62 and 2.46, with no fixed low-detail cost. Other families (o-series,
// gpt-5, other providers) get the default bound until a rule is verified.
var imageRules = []struct {
	prefix string
	rule   ImageRule
}{
	{"gpt-4o-mini", ImageRule{Low: 2833, Max: 2833 + 8*5667}},
	{"gpt-4.1-mini", ImageRule{Max: 2489}},
	{"gpt-4.1-nano", ImageRule{Max: 3779}},
	{"gpt-4-turbo", ImageRule{Low: 85, Max: 85 + 8*170}},
	{"gpt-4.1", ImageRule{Low: 85, Max: 85 + 8*170}},
	{"gpt-4.5", ImageRule{Low: 85, Max: 85 + 8*170}},
	{"gpt-4o", ImageRule{Low: 85, Max: 85 + 8*170}},
}

// imageRuleFor returns the published rule of model's family (the name
// normalized as for the model table), or the zero rule.
func imageRuleFor(model string) ImageRule {
	best := -1
	for i, r := range imageRules {
		if strings.HasPrefix(model, r.prefix) && (best < 0 || len(r.prefix) > len(imageRules[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return ImageRule{}
	}
	return imageRules[best].rule
}

// count charges one image part.
func (r ImageRule) count(detail string) Count {
	if detail == DetailLow && r.Low > 0 {
		return Count{Tokens: r.Low, Method: Exact, Basis: BasisParts}
	}
	return Count{Tokens: cmp.Or(r.Max, DefaultImageMax), Method: Estimated, Basis: BasisParts}
}
