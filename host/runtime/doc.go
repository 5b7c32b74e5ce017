// Package runtime is the typed Go API of rlmpl, with no Prolog in it:
// conversation stores, durable conversations, packs under a hard token
// ceiling and cold-history handles. The Prolog predicates (package host),
// the CLI and Go programs all call it; whatever they add is decoding and
// encoding.
//
// A caller:
//
//  1. makes one [Runtime] (New) and closes it at the end; it is safe for
//     concurrent use;
//  2. opens stores with [Runtime.OpenStore]: in memory, or a directory under
//     Options.StateDir (or granted by Options.Grants) — one resolution rule,
//     [Runtime.Resolve], for every caller;
//  3. works on a [Conversation] (Store.Conversation): Append counts the
//     content in the policy's encodings before the write, so packs never
//     re-tokenize; Messages, Search, Stats, Export and Import read and load;
//  4. packs with [Conversation.Pack], passing a complete [PackOptions]: the
//     runtime has no policy defaults of its own — the policy is lib's, and
//     host.Host.Defaults reads it for Go callers. Options are validated
//     whole before any read or write;
//  5. hands a planner the conversation's history through
//     [Conversation.ColdContext], an opaque handle that can reach nothing
//     else.
//
// Errors are the store's sentinels and *store.ValidationError, *pack.Error
// and *pack.FieldError, tokenizer and handle errors, and this package's
// [ErrPathNotGranted], [ErrStorePath], [ErrStoreNotFound] and [ErrStoreOpen].
package runtime
