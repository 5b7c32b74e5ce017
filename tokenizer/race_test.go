//go:build race

package tokenizer

// raceEnabled: the race detector drops sync.Pool items at random, so
// allocation counts mean nothing under -race.
const raceEnabled = true
