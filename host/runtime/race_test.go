//go:build race

package runtime

// raceEnabled: measurements that take a minute under -race run only
// without it (they race nothing the smaller cases do not).
const raceEnabled = true
