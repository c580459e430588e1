package sasl

import (
	"bytes"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// RFC 7677, section 3: SCRAM-SHA-256 for user "user", password "pencil". Kafka's
// ScramFormatterTest.rfc7677Example checks the same values.
const (
	rfcC1    = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfcSNon  = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	rfcS1    = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcC2    = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcS2    = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	rfcSalt  = "W22ZaJ0SNY7soEsUEjb6gQ=="
	rfcProof = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)

// rfcCredential is the RFC 7677 user's credential, derived once since
// the fuzz targets need it on every input.
func rfcCredential(t *testing.T) ScramCredential {
	t.Helper()
	c, err := rfcCredentialOnce()
	if err != nil {
		t.Fatal(err)
	}
	c.Salt = bytes.Clone(c.Salt)
	return c
}

var rfcCredentialOnce = sync.OnceValues(func() (ScramCredential, error) {
	salt, _ := base64.StdEncoding.DecodeString(rfcSalt)
	return NewScramCredential(ScramSHA256, "pencil", salt, 4096)
})

func rfcServer(t *testing.T, users map[string]ScramCredential, opts ...ScramOption) Server {
	t.Helper()
	s, err := NewScramServer(ScramSHA256, func(u string) (ScramCredential, bool) {
		c, ok := users[u]
		return c, ok
	}, func() string { return rfcSNon }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScramRFC7677(t *testing.T) {
	s := rfcServer(t, map[string]ScramCredential{"user": rfcCredential(t)})
	reply, done, err := s.Step([]byte(rfcC1))
	if err != nil || done || string(reply) != rfcS1 {
		t.Fatalf("first: %q %v %v; want %q", reply, done, err, rfcS1)
	}
	if s.AuthorizationID() != "" {
		t.Fatal("AuthorizationID before completion")
	}
	reply, done, err = s.Step([]byte(rfcC2))
	if err != nil || !done || string(reply) != rfcS2 {
		t.Fatalf("final: %q %v %v; want %q", reply, done, err, rfcS2)
	}
	if s.AuthorizationID() != "user" {
		t.Fatalf("AuthorizationID = %q", s.AuthorizationID())
	}
	if _, ok := s.(*ScramServer).TokenAuthenticated(); ok {
		t.Fatal("not a token login")
	}
	_, _, err = s.Step([]byte(rfcC2))
	if ae := asAuthError(t, err); !ae.IllegalState || ae.Reason != "Unexpected challenge in Sasl server state COMPLETE" {
		t.Fatalf("%+v", ae)
	}
}

const genericSHA256 = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"

// TestScramFailures runs the RFC 7677 exchange with one message altered.
func TestScramFailures(t *testing.T) {
	creds := map[string]ScramCredential{"user": rfcCredential(t)}
	lowIter := rfcCredential(t)
	lowIter.Iterations = 4095
	cases := []struct {
		name   string
		first  string
		final  string // "" when the first message already fails
		creds  map[string]ScramCredential
		reason string
		public bool
	}{
		{name: "unknown user", first: "n,,n=bob,r=rOprNGfwEbeRWgbNEkqO",
			reason: "Authentication failed: Invalid user credentials"},
		{name: "authzid differs", first: "n,a=other,n=user,r=rOprNGfwEbeRWgbNEkqO", public: true,
			reason: "Authentication failed: Client requested an authorization id that is different from username"},
		{name: "channel binding y", first: "y,,n=user,r=rOprNGfwEbeRWgbNEkqO",
			reason: "Invalid SCRAM client first message format"},
		{name: "channel binding p", first: "p=tls-unique,,n=user,r=rOprNGfwEbeRWgbNEkqO",
			reason: "Invalid SCRAM client first message format"},
		{name: "too few iterations", first: rfcC1, creds: map[string]ScramCredential{"user": lowIter},
			reason: "Iterations 4095 is less than the minimum 4096 for SCRAM_SHA_256"},
		{name: "malformed first", first: "n,,n=user", reason: "Invalid SCRAM client first message format"},
		{name: "empty first", first: "", reason: "Invalid SCRAM client first message format"},
		{name: "token login without token lookup", first: rfcC1 + ",tokenauth=true",
			reason: "Token Authentication failed: Invalid tokenId : user"},
		{name: "wrong password", first: rfcC1,
			final:  "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)),
			reason: "Invalid client credentials"},
		{name: "bad nonce", first: rfcC1,
			final:  "c=biws,r=rOprNGfwEbeRWgbNEkqOX,p=" + rfcProof,
			reason: "Invalid client nonce in the final client message."},
		// A nonce that only ends with the combined one passes the nonce
		// check, as in Kafka (librdkafka sends its own nonce twice), but
		// this proof was computed over the message without the prefix.
		{name: "nonce with prefix, proof over another message", first: rfcC1,
			final:  "c=biws,r=XrOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=" + rfcProof,
			reason: "Invalid client credentials"},
		{name: "nonce not ending with the combined one", first: rfcC1,
			final:  "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + "X,p=" + rfcProof,
			reason: "Invalid client nonce in the final client message."},
		{name: "tampered c=", first: rfcC1,
			final:  "c=eSws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=" + rfcProof,
			reason: "Invalid channel binding in the final client message."},
		{name: "c= for an authzid the client did not send", first: rfcC1,
			final:  "c=" + base64.StdEncoding.EncodeToString([]byte("n,a=user,")) + ",r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=" + rfcProof,
			reason: "Invalid channel binding in the final client message."},
		{name: "short proof", first: rfcC1,
			final:  "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=AAAA",
			reason: "Invalid client credentials"},
		{name: "extension in final changes AuthMessage", first: rfcC1,
			final:  "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",x=y,p=" + rfcProof,
			reason: "Invalid client credentials"},
		{name: "malformed final", first: rfcC1, final: "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon,
			reason: "Invalid SCRAM client final message format"},
		{name: "proof not base64", first: rfcC1, final: "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=***",
			reason: "Invalid SCRAM client final message format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := creds
			if tc.creds != nil {
				c = tc.creds
			}
			s := rfcServer(t, c)
			_, _, err := s.Step([]byte(tc.first))
			if tc.final != "" {
				if err != nil {
					t.Fatalf("first: %v", err)
				}
				_, _, err = s.Step([]byte(tc.final))
			}
			if err == nil {
				t.Fatal("exchange succeeded")
			}
			ae := asAuthError(t, err)
			if ae.Reason != tc.reason || ae.Public != tc.public || ae.Mechanism != ScramSHA256 {
				t.Fatalf("error %+v; want reason %q public %v", ae, tc.reason, tc.public)
			}
			want := genericSHA256
			if tc.public {
				want = tc.reason
			}
			if ae.ErrorMessage(false) != want {
				t.Fatalf("ErrorMessage %q; want %q", ae.ErrorMessage(false), want)
			}
			_, _, err = s.Step([]byte(rfcC2))
			if ae := asAuthError(t, err); !ae.IllegalState || ae.Reason != "Unexpected challenge in Sasl server state FAILED" {
				t.Fatalf("after failure: %+v", ae)
			}
			if s.AuthorizationID() != "" {
				t.Fatal("AuthorizationID after failure")
			}
		})
	}
}

func TestScramReauthenticationText(t *testing.T) {
	ae := privateError(ScramSHA512, "x")
	want := "Authentication failed during re-authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
	if ae.ErrorMessage(true) != want {
		t.Fatal(ae.ErrorMessage(true))
	}
}

// TestScramFranzClient runs complete exchanges against franz-go's SCRAM
// client, an independent implementation, for both mechanisms.
func TestScramFranzClient(t *testing.T) {
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		users := map[string]ScramCredential{}
		for user, pass := range map[string]string{"alice": "alice-secret", "a,b=c": "p,w=d", "ü": "pässword"} {
			c, err := NewScramCredential(mech, pass, []byte("salt-"+user), 4096)
			if err != nil {
				t.Fatal(err)
			}
			users[user] = c
		}
		lookup := func(u string) (ScramCredential, bool) { c, ok := users[u]; return c, ok }
		cases := []struct {
			name string
			auth scram.Auth
			msg  string
		}{
			{"ok", scram.Auth{User: "alice", Pass: "alice-secret"}, ""},
			{"ok with zid", scram.Auth{Zid: "alice", User: "alice", Pass: "alice-secret"}, ""},
			{"escaped name", scram.Auth{User: "a,b=c", Pass: "p,w=d"}, ""},
			{"escaped name and zid", scram.Auth{Zid: "a,b=c", User: "a,b=c", Pass: "p,w=d"}, ""},
			{"non-ASCII name (Kafka's grammar is ASCII)", scram.Auth{User: "ü", Pass: "pässword"},
				"Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech},
			{"wrong password", scram.Auth{User: "alice", Pass: "alice-secreT"},
				"Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech},
			{"unknown user", scram.Auth{User: "bob", Pass: "alice-secret"},
				"Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech},
			{"other zid", scram.Auth{Zid: "bob", User: "alice", Pass: "alice-secret"},
				"Authentication failed: Client requested an authorization id that is different from username"},
		}
		for _, tc := range cases {
			t.Run(mech+"/"+tc.name, func(t *testing.T) {
				s, err := NewScramServer(mech, lookup, RandomNonce)
				if err != nil {
					t.Fatal(err)
				}
				m := tc.auth.AsSha256Mechanism()
				if mech == ScramSHA512 {
					m = tc.auth.AsSha512Mechanism()
				}
				err = exchange(t, m, s)
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
}

func TestScramDelegationToken(t *testing.T) {
	tokenCred, err := NewScramCredential(ScramSHA512, "token-hmac", []byte("tsalt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	tokens := WithTokenLookup(func(id string) (ScramCredential, string, int64, bool) {
		if id != "tok1" {
			return ScramCredential{}, "", 0, false
		}
		return tokenCred, "owner", 12345, true
	})
	noUsers := func(string) (ScramCredential, bool) {
		t.Fatal("user lookup for a token login")
		return ScramCredential{}, false
	}
	cases := []struct {
		name string
		auth scram.Auth
		ok   bool
	}{
		{"token", scram.Auth{User: "tok1", Pass: "token-hmac", IsToken: true}, true},
		{"unknown token", scram.Auth{User: "tok2", Pass: "token-hmac", IsToken: true}, false},
		{"wrong hmac", scram.Auth{User: "tok1", Pass: "x", IsToken: true}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewScramServer(ScramSHA512, noUsers, RandomNonce, tokens)
			if err != nil {
				t.Fatal(err)
			}
			err = exchange(t, tc.auth.AsSha512Mechanism(), srv)
			if !tc.ok {
				asAuthError(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if srv.AuthorizationID() != "owner" {
				t.Fatalf("AuthorizationID = %q", srv.AuthorizationID())
			}
			if exp, ok := srv.(*ScramServer).TokenAuthenticated(); !ok || exp != 12345 {
				t.Fatalf("TokenAuthenticated = %d %v", exp, ok)
			}
		})
	}
}

// TestScramExtensionsIgnored: unknown extensions and a reserved m= are
// accepted, as in Kafka, and are part of the AuthMessage as sent.
func TestScramExtensionsIgnored(t *testing.T) {
	cred := rfcCredential(t)
	for _, first := range []string{
		rfcC1 + ",foo=bar,Baz=q=1",
		"n,,m=reserved,n=user,r=rOprNGfwEbeRWgbNEkqO",
		rfcC1 + ",tokenauth=false",
	} {
		s := rfcServer(t, map[string]ScramCredential{"user": cred})
		reply, _, err := s.Step([]byte(first))
		if err != nil {
			t.Fatalf("%q: %v", first, err)
		}
		bare := first[strings.Index(first, ",,")+2:]
		final := clientFinalFor(t, ScramSHA256, "pencil", "n,,", bare, string(reply))
		if _, done, err := s.Step([]byte(final)); err != nil || !done {
			t.Fatalf("%q: final: %v", first, err)
		}
	}
}

// clientFinalFor computes a client-final message from the password, a small
// client used where franz-go cannot send the message under test.
func clientFinalFor(t *testing.T, mech, password, gs2, bare, serverFirst string) string {
	t.Helper()
	m := lookupMech(mech)
	sf, _ := parseExtensions("," + serverFirst)
	salt, _ := base64.StdEncoding.DecodeString(sf["s"])
	var iter int
	for _, c := range sf["i"] {
		iter = iter*10 + int(c-'0')
	}
	cred, err := NewScramCredential(mech, password, salt, iter)
	if err != nil {
		t.Fatal(err)
	}
	salted := pbkdf2Salted(t, m, password, salt, iter)
	clientKey := m.hmac(salted, []byte("Client Key"))
	without := "c=" + base64.StdEncoding.EncodeToString([]byte(gs2)) + ",r=" + sf["r"]
	sig := m.hmac(cred.StoredKey, []byte(bare+","+serverFirst+","+without))
	for i := range sig {
		sig[i] ^= clientKey[i]
	}
	return without + ",p=" + base64.StdEncoding.EncodeToString(sig)
}

func TestNewScramServerErrors(t *testing.T) {
	lookup := func(string) (ScramCredential, bool) { return ScramCredential{}, false }
	if _, err := NewScramServer("SCRAM-SHA-1", lookup, RandomNonce); err == nil ||
		err.Error() != "Requested mechanism 'SCRAM-SHA-1' is not supported. Supported mechanisms are '[SCRAM-SHA-256, SCRAM-SHA-512]'." {
		t.Fatalf("unknown mechanism: %v", err)
	}
	if _, err := NewScramServer(ScramSHA256, nil, RandomNonce); err == nil {
		t.Fatal("nil lookup accepted")
	}
	if _, err := NewScramServer(ScramSHA256, lookup, nil); err == nil {
		t.Fatal("nil nonce accepted")
	}
	// A bad server nonce fails the exchange rather than producing a
	// server-first message the client cannot parse.
	s, _ := NewScramServer(ScramSHA256, func(string) (ScramCredential, bool) { return rfcCredential(t), true },
		func() string { return "a,b" })
	if _, _, err := s.Step([]byte(rfcC1)); err == nil {
		t.Fatal("nonce with comma accepted")
	}
}

func TestScramOversizeToken(t *testing.T) {
	s := rfcServer(t, map[string]ScramCredential{"user": rfcCredential(t)})
	_, _, err := s.Step([]byte(rfcC1 + ",x=" + strings.Repeat("a", MaxTokenSize)))
	if ae := asAuthError(t, err); ae.Public || !strings.Contains(ae.Reason, "exceeds the bound") {
		t.Fatalf("%+v", ae)
	}
}

func TestRandomNonce(t *testing.T) {
	a, b := RandomNonce(), RandomNonce()
	if a == b || !isPrintable(a) || len(a) > 26 {
		t.Fatalf("nonces %q %q", a, b)
	}
}
