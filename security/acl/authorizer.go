package acl

import (
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config is the part of a broker's configuration AclAuthorizer reads.
type Config struct {
	// SuperUsers are principals ("User:admin") allowed everything
	// (super.users, already split; see ParseSuperUsers).
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found.
	AllowEveryoneIfNoACLFound bool
}

// Authorizer is the ACL cache with AclAuthorizer's decisions. It is safe
// for concurrent use.
type Authorizer struct {
	superUsers    map[string]bool
	allowEveryone bool

	mu sync.RWMutex
	// acls is AclAuthorizer.aclCache: every pattern with a non-empty,
	// sorted entry set.
	acls map[ResourcePattern][]Entry
	// byType is AclAuthorizer.resourceCache, the index behind
	// AuthorizeByResourceType: for each entry, resource type and pattern
	// type, the names of the patterns carrying that entry.
	byType map[typeKey]map[string]bool
}

type typeKey struct {
	entry       Entry
	typ         kmsg.ACLResourceType
	patternType kmsg.ACLResourcePatternType
}

// New returns an Authorizer with an empty cache.
func New(cfg Config) *Authorizer {
	a := &Authorizer{
		superUsers:    map[string]bool{},
		allowEveryone: cfg.AllowEveryoneIfNoACLFound,
		acls:          map[ResourcePattern][]Entry{},
		byType:        map[typeKey]map[string]bool{},
	}
	for _, u := range cfg.SuperUsers {
		if u = strings.TrimSpace(u); u != "" {
			a.superUsers[u] = true
		}
	}
	return a
}

// storable reports whether a pattern can exist in ZooKeeper: a concrete
// resource type and LITERAL or PREFIXED (ZkAclStore has no other store).
func storable(p ResourcePattern) bool {
	t := resourceTypeFromCode(p.Type)
	return t != kmsg.ACLResourceTypeUnknown && t != kmsg.ACLResourceTypeAny &&
		(p.PatternType == kmsg.ACLResourcePatternTypeLiteral || p.PatternType == kmsg.ACLResourcePatternTypePrefixed)
}

// SetResourceACLs replaces the entry set of one pattern, as AclAuthorizer
// does after reading the pattern's znode on a change notification; an
// empty set removes the pattern. Duplicate entries collapse, and operation
// or permission codes Kafka does not know become UNKNOWN (such entries never
// grant or deny, but still count as "an ACL exists"). Patterns that cannot
// be stored (see ZnodePath) are ignored.
func (a *Authorizer) SetResourceACLs(p ResourcePattern, entries []Entry) {
	if !storable(p) {
		return
	}
	norm := make([]Entry, len(entries))
	for i, e := range entries {
		e.Operation, e.Permission = operationFromCode(e.Operation), permissionFromCode(e.Permission)
		norm[i] = e
	}
	next := normalizeEntries(norm)

	a.mu.Lock()
	defer a.mu.Unlock()
	prev := a.acls[p]
	for _, e := range prev {
		if _, found := slices.BinarySearchFunc(next, e, compareEntries); !found {
			k := typeKey{e, p.Type, p.PatternType}
			delete(a.byType[k], p.Name)
			if len(a.byType[k]) == 0 {
				delete(a.byType, k)
			}
		}
	}
	for _, e := range next {
		if _, found := slices.BinarySearchFunc(prev, e, compareEntries); !found {
			k := typeKey{e, p.Type, p.PatternType}
			if a.byType[k] == nil {
				a.byType[k] = map[string]bool{}
			}
			a.byType[k][p.Name] = true
		}
	}
	if len(next) == 0 {
		delete(a.acls, p)
	} else {
		a.acls[p] = next
	}
}

// RemoveResource drops a pattern from the cache (its znode is gone).
func (a *Authorizer) RemoveResource(p ResourcePattern) { a.SetResourceACLs(p, nil) }

// ResourceACLs is the cached entry set of one pattern (nil if none): the
// "current ACLs" CreateAcls and DeleteAcls start from.
func (a *Authorizer) ResourceACLs(p ResourcePattern) []Entry {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return slices.Clone(a.acls[p])
}

func (a *Authorizer) isSuperUser(principal string) bool { return a.superUsers[principal] }
