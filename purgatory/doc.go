// Package purgatory holds delayed operations: requests whose answer waits
// until something happens to one of the keys they watch (for the broker, a
// partition's high watermark, log end or leadership) or until a timeout.
// It is the broker's one waiting mechanism for acks=-1 produces and
// long-polling fetches, on the model of Kafka's DelayedOperationPurgatory
// (docs/purgatory.md names the Kafka sources).
//
// An Operation only decides: TryComplete(now) reports whether it can be
// answered. The purgatory decides when to ask: once when the operation
// arrives (TryCompleteElseWatch), again after it is on every key's watch
// list (so that a change between the first check and the watch is not
// missed), then at every CheckAndComplete of one of its keys, and it
// completes the operation at its timeout through the Clock's timer. An
// operation completes exactly once, whichever of these comes first, and
// leaves every watch list and its timer when it does.
//
// Locks: an operation's lock is held while TryComplete runs, and
// TryComplete may take the locks of the things it inspects (partitions).
// CheckAndComplete must therefore be called without holding any of those
// locks; replica.Partition calls it after releasing its own.
package purgatory
