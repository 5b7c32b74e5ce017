// Package store holds durable conversations on badger.
package store
