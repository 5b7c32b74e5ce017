// Package store holds durable conversations on badger: conversation
// headers, messages with dense per-conversation sequences, idempotency
// keys, cached token counts and O(1) counters.
//
// The package stores messages in the normalized OpenAI chat shape
// ([Message]); it knows nothing of Prolog terms.
package store
