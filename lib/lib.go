// Package lib embeds rlmpl's Prolog sources: the public predicates, option
// validation, outcome shaping and the context policy. It holds no Go logic.
package lib

import "embed"

// FS holds every lib/*.pl file, consulted in name order by the host.
//
//go:embed *.pl
var FS embed.FS
