// Package acl is the ZooKeeper-mode ACL authorizer of kbroker: the in-memory
// ACL cache, the authorization decisions and the znode codec, mirroring
// Kafka's AclAuthorizer (with AclEntry, ZkAclStore and ZkAclChangeStore).
// It performs no ZooKeeper IO: the caller reads and writes znodes and feeds
// what it sees into the Authorizer.
//
// # API
//
// Model (kmsg enum values throughout):
//   - ResourcePattern, Entry, Binding: a stored ACL (Kafka's ResourcePattern,
//     AccessControlEntry, AclBinding); Resource is what a request touches.
//   - PatternFilter, EntryFilter, BindingFilter: DescribeAcls/DeleteAcls
//     filters with Kafka's ANY/MATCH/null semantics (nil pointer = null).
//   - CreationBinding, ValidateCreations, DescribeFilter, DeleteFilter: the
//     conversions and checks Kafka applies to CreateAcls, DescribeAcls and
//     DeleteAcls requests; a Rejection carries the kerr error, the message
//     and whether it fails one binding, the request or the connection.
//   - MergeEntries, DeleteFromEntries: the entry-set arithmetic of
//     CreateAcls and DeleteAcls, for sets read from ZooKeeper.
//   - ParseSuperUsers, SupportedOperations, the Pascal-case name functions.
//
// Decisions, on *Authorizer (New(Config)):
//   - SetResourceACLs / RemoveResource / ResourceACLs: the cache, updated the
//     way AclAuthorizer.updateCache does after reading a resource znode.
//   - Authorize, AuthorizeByResourceType, AuthorizedOperations: the checks.
//   - Bindings (DescribeAcls), Matching (DeleteAcls: what each filter
//     removes and each pattern's new set, without changing the cache).
//
// Znode codec (byte-compatible with Kafka 3.9):
//   - ZnodePath / ParseZnodePath: /kafka-acl/<Type>/<name> and
//     /kafka-acl-extended/prefixed/<Type>/<name>.
//   - EncodeEntries / DecodeEntries: the resource znode JSON.
//   - ChangeNotification / ParseChangeNotification: the sequential change
//     znodes under /kafka-acl-changes and /kafka-acl-extended-changes.
//   - InitPaths: the znodes Kafka's createAclPaths makes before first use.
//
// # Invariants
//
// The cache holds only non-empty entry sets; an entry set is a set (no
// duplicates) kept sorted. Principals are compared as "Type:name" strings,
// which is equivalent to Kafka's KafkaPrincipal equality for principals
// parsed from such strings. Hosts are compared as given (Kafka compares the
// client's textual IP address).
//
// # Locks
//
// Authorizer has one sync.RWMutex: decisions and reads take it shared,
// SetResourceACLs and RemoveResource take it exclusively. Nothing else in the
// package has state.
package acl
