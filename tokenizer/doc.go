// Package tokenizer is the registry from model and encoding names to token
// counters: exact where the vocabulary is known, estimated otherwise.
package tokenizer
