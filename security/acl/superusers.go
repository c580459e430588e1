package acl

import (
	"fmt"
	"strings"
)

// ParseSuperUsers reads the super.users setting the way AclAuthorizer.
// configure does: principals separated by ";", each trimmed and required to
// be "type:name". An empty setting means no super users; trailing empty
// pieces are dropped (Java's String.split does) but an empty piece in the
// middle is an error.
func ParseSuperUsers(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ";")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if !validPrincipal(p) {
			return nil, fmt.Errorf("super.users: expected a string in format principalType:principalName but got %q", p)
		}
		out = append(out, p)
	}
	return out, nil
}
