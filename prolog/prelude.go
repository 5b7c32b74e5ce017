package prolog

import _ "embed"

// preludeSource is the Prolog half of the compatibility prelude.
//
//go:embed prelude.pl
var preludeSource string

// preludeDefs is the Go half of the compatibility prelude.
var preludeDefs = []Def{}
