package sasl

import (
	"context"
	"crypto/pbkdf2"
	"errors"
	"testing"

	kgosasl "github.com/twmb/franz-go/pkg/sasl"
)

// exchange drives a franz-go client mechanism against srv in memory. It
// returns the server's error (an *AuthError) or the client's, and is bounded
// to a few round trips.
func exchange(t *testing.T, mech kgosasl.Mechanism, srv Server) error {
	t.Helper()
	sess, msg, err := mech.Authenticate(context.Background(), "127.0.0.1:9092")
	if err != nil {
		t.Fatalf("client Authenticate: %v", err)
	}
	for range 4 {
		reply, done, err := srv.Step(msg)
		if err != nil {
			return err
		}
		cdone, next, cerr := sess.Challenge(reply)
		if cerr != nil {
			return errClient{cerr}
		}
		if done != cdone {
			t.Fatalf("server done=%v but client done=%v", done, cdone)
		}
		if done {
			return nil
		}
		msg = next
	}
	t.Fatal("exchange did not finish in 4 round trips")
	return nil
}

type errClient struct{ error }

// asAuthError fails the test unless err is an *AuthError.
func asAuthError(t *testing.T, err error) *AuthError {
	t.Helper()
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *AuthError", err, err)
	}
	return ae
}

func pbkdf2Salted(t *testing.T, m *scramMech, password string, salt []byte, iter int) []byte {
	t.Helper()
	b, err := pbkdf2.Key(m.newHash, password, salt, iter, m.size)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
