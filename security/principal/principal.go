package principal

import (
	"errors"
	"fmt"
	"strings"
)

// UserType is the principal type every built-in authenticator produces
// (Kafka's KafkaPrincipal.USER_TYPE).
const UserType = "User"

// Principal is a Kafka principal: a type and a name, written "Type:Name".
type Principal struct {
	Type string
	Name string
}

// Anonymous is the principal of a connection that proved nothing: PLAINTEXT,
// or SSL without a client certificate (Kafka's KafkaPrincipal.ANONYMOUS).
var Anonymous = Principal{Type: UserType, Name: "ANONYMOUS"}

// User returns the principal User:name.
func User(name string) Principal { return Principal{Type: UserType, Name: name} }

// String renders the principal as Kafka's KafkaPrincipal.toString does.
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ErrPrincipalFormat is wrapped by every Parse error.
var ErrPrincipalFormat = errors.New("expected a string in format principalType:principalName")

// Parse reads "Type:Name" as Kafka's SecurityUtils.parseKafkaPrincipal: the
// string is split at the first ':' only, so the name may itself contain
// colons, and either side may be empty (":x" and "User:" are accepted, as
// in Kafka). An empty string or one without ':' is an error.
func Parse(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok {
		return Principal{}, &parseError{s}
	}
	return Principal{Type: typ, Name: name}, nil
}

type parseError struct{ s string }

func (e *parseError) Error() string {
	return fmt.Sprintf("%v but got %q", ErrPrincipalFormat, e.s)
}

func (e *parseError) Unwrap() error { return ErrPrincipalFormat }
