// Package lint holds repository-wide checks that run as ordinary Go tests
// (`make unit`, and so `make test`): rules about the repository's text that
// the compiler, go vet and staticcheck do not see.
//
// TestNoOutsideReferences fails when a source, script or documentation file
// cites a section mark or a design document that is not in the repository.
// Comments say why in their own words; a fact that needs a source goes in
// docs/, naming the Kafka source file or KIP (docs/replication-reference.md).
package lint
