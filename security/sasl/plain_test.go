package sasl

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/plain"
)

var plainUsers = map[string]string{"userA": "passwordA", "userB": "passwordB"}

func TestPlainStep(t *testing.T) {
	const nul = "\x00"
	cases := []struct {
		name  string
		token string
		msg   string // "" means success
	}{
		// Kafka's PlainSaslServerTest.
		{"no authzid", nul + "userA" + nul + "passwordA", ""},
		{"authzid equals user", "userA" + nul + "userA" + nul + "passwordA", ""},
		{"authzid differs", "userB" + nul + "userA" + nul + "passwordA",
			"Authentication failed: Client requested an authorization id that is different from username"},
		{"all empty", nul + nul, "Authentication failed: username not specified"},
		{"empty user", nul + nul + "p", "Authentication failed: username not specified"},
		{"empty password", nul + "u" + nul, "Authentication failed: password not specified"},
		{"authzid, empty user", "a" + nul + nul, "Authentication failed: username not specified"},
		{"authzid, empty user, password", "a" + nul + nul + "p", "Authentication failed: username not specified"},
		{"authzid, empty password", "a" + nul + "u" + nul, "Authentication failed: password not specified"},
		{"four tokens", "a" + nul + "u" + nul + "p" + nul, "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{"two tokens", nul + "u", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"},
		// Beyond Kafka's test.
		{"empty token", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{"many NULs still four", strings.Repeat(nul, 9), "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{"wrong password", nul + "userA" + nul + "passwordB", "Authentication failed: Invalid username or password"},
		{"unknown user", nul + "userC" + nul + "passwordA", "Authentication failed: Invalid username or password"},
		{"wrong password before authzid check", "userB" + nul + "userA" + nul + "x",
			"Authentication failed: Invalid username or password"},
		{"password prefix", nul + "userA" + nul + "password", "Authentication failed: Invalid username or password"},
		{"invalid UTF-8 password", nul + "userA" + nul + "passwordA\xff", "Authentication failed: Invalid username or password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewPlainServer(PlainVerifier(plainUsers))
			reply, done, err := s.Step([]byte(tc.token))
			if tc.msg == "" {
				if err != nil || !done || reply == nil || len(reply) != 0 {
					t.Fatalf("Step = %q, %v, %v; want empty reply, done", reply, done, err)
				}
				if got := s.AuthorizationID(); got != "userA" {
					t.Fatalf("AuthorizationID = %q", got)
				}
				return
			}
			if err == nil || done {
				t.Fatalf("Step succeeded; want %q", tc.msg)
			}
			ae := asAuthError(t, err)
			if !ae.Public || ae.ErrorMessage(false) != tc.msg || err.Error() != tc.msg {
				t.Fatalf("error %+v; want public %q", ae, tc.msg)
			}
			if s.AuthorizationID() != "" {
				t.Fatal("AuthorizationID set after failure")
			}
		})
	}
}

func TestPlainFranzClient(t *testing.T) {
	cases := []struct {
		name string
		auth plain.Auth
		msg  string
	}{
		{"ok", plain.Auth{User: "userA", Pass: "passwordA"}, ""},
		{"ok with zid", plain.Auth{Zid: "userB", User: "userB", Pass: "passwordB"}, ""},
		{"wrong password", plain.Auth{User: "userA", Pass: "passwordB"}, "Authentication failed: Invalid username or password"},
		{"other zid", plain.Auth{Zid: "userB", User: "userA", Pass: "passwordA"},
			"Authentication failed: Client requested an authorization id that is different from username"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewPlainServer(PlainVerifier(plainUsers))
			err := exchange(t, tc.auth.AsMechanism(), s)
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s.AuthorizationID() != tc.auth.User {
					t.Fatalf("AuthorizationID = %q", s.AuthorizationID())
				}
				return
			}
			if ae := asAuthError(t, err); ae.ErrorMessage(false) != tc.msg {
				t.Fatalf("error %q; want %q", ae.ErrorMessage(false), tc.msg)
			}
		})
	}
}

func TestPlainStates(t *testing.T) {
	ok := []byte("\x00userA\x00passwordA")
	cases := []struct {
		name  string
		first []byte
		state string
	}{
		{"after success", ok, "COMPLETE"},
		{"after failure", []byte("x"), "FAILED"},
		{"after oversize token", make([]byte, MaxTokenSize+1), "FAILED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewPlainServer(PlainVerifier(plainUsers))
			s.Step(tc.first)
			_, done, err := s.Step(ok)
			ae := asAuthError(t, err)
			want := "Unexpected challenge in Sasl server state " + tc.state
			if done || !ae.IllegalState || ae.ErrorMessage(false) != want {
				t.Fatalf("second Step: %+v; want %q", ae, want)
			}
		})
	}
}

func TestPlainOversizeIsPrivate(t *testing.T) {
	s := NewPlainServer(func(string, string) bool { return true })
	_, _, err := s.Step(make([]byte, MaxTokenSize+1))
	ae := asAuthError(t, err)
	want := "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN"
	if ae.Public || ae.ErrorMessage(false) != want {
		t.Fatalf("%+v", ae)
	}
	// At the bound a token is still parsed.
	tok := append([]byte("\x00u\x00"), make([]byte, MaxTokenSize-3)...)
	for i := 3; i < len(tok); i++ {
		tok[i] = 'p'
	}
	if _, done, err := NewPlainServer(func(string, string) bool { return true }).Step(tok); err != nil || !done {
		t.Fatalf("token of MaxTokenSize: %v", err)
	}
}

func TestPlainNilVerifier(t *testing.T) {
	_, _, err := NewPlainServer(nil).Step([]byte("\x00u\x00p"))
	if ae := asAuthError(t, err); ae.Reason != "Authentication failed: Invalid username or password" {
		t.Fatal(ae)
	}
}

func TestPlainVerifier(t *testing.T) {
	v := PlainVerifier(map[string]string{"a": "x", "": "y"})
	cases := []struct {
		user, pass string
		want       bool
	}{{"a", "x", true}, {"a", "y", false}, {"a", "", false}, {"b", "x", false}, {"", "y", true}, {"a", "xx", false}}
	for _, c := range cases {
		if got := v(c.user, c.pass); got != c.want {
			t.Errorf("verify(%q, %q) = %v", c.user, c.pass, got)
		}
	}
}
