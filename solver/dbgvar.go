package solver

var debugSolve bool
var dpOrder int
var beamW = 64
var dpProfile bool
