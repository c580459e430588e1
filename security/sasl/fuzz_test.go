package sasl

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func FuzzPlainStep(f *testing.F) {
	f.Add([]byte("\x00userA\x00passwordA"))
	f.Add([]byte("userA\x00userA\x00passwordA"))
	f.Add([]byte("\x00\x00"))
	f.Fuzz(func(t *testing.T, token []byte) {
		var called []string
		s := NewPlainServer(func(u, p string) bool {
			called = append(called, u)
			return PlainVerifier(plainUsers)(u, p)
		})
		reply, done, err := s.Step(token)
		var ae *AuthError
		switch {
		case err == nil:
			if !done || reply == nil || len(reply) != 0 || len(called) != 1 || s.AuthorizationID() != called[0] {
				t.Fatalf("success: %q %v %v %q", reply, done, called, s.AuthorizationID())
			}
			if bytes.Count(token, []byte{0}) != 2 {
				t.Fatalf("accepted a token with %d NULs", bytes.Count(token, []byte{0}))
			}
		case !errors.As(err, &ae) || done || reply != nil || s.AuthorizationID() != "":
			t.Fatalf("failure: %v %v %q", err, done, reply)
		case !ae.Public && len(token) <= MaxTokenSize:
			t.Fatalf("PLAIN errors are all Kafka SaslAuthenticationExceptions: %+v", ae)
		}
		if _, _, err := s.Step(token); !errors.As(err, &ae) || !ae.IllegalState {
			t.Fatalf("second Step: %v", err)
		}
	})
}

func FuzzScramClientFirst(f *testing.F) {
	f.Add([]byte(rfcC1))
	f.Add([]byte("n,a=user,m=x,n=user,r=abc,tokenauth=true,k=v"))
	f.Add([]byte("y,,n=user,r=abc"))
	f.Fuzz(func(t *testing.T, first []byte) {
		cred := rfcCredential(t)
		s, err := NewScramServer(ScramSHA256, func(string) (ScramCredential, bool) { return cred, true },
			func() string { return rfcSNon })
		if err != nil {
			t.Fatal(err)
		}
		reply, done, err := s.Step(first)
		cf, perr := parseClientFirst(string(first))
		if perr == nil {
			// The parse keeps the message as sent and the name canonical.
			if cf.gs2Header+cf.bare != string(first) {
				t.Fatalf("gs2 %q + bare %q != %q", cf.gs2Header, cf.bare, first)
			}
			if !strings.Contains(cf.bare, "n="+EscapeSaslName(cf.user)+",r="+cf.nonce) {
				t.Fatalf("bare %q lacks user %q nonce %q", cf.bare, cf.user, cf.nonce)
			}
		}
		if done {
			t.Fatal("done after the first message")
		}
		if err != nil {
			var ae *AuthError
			if !errors.As(err, &ae) || reply != nil {
				t.Fatalf("%v %q", err, reply)
			}
			return
		}
		if perr != nil {
			t.Fatalf("server accepted what the parser refused: %v", perr)
		}
		want := "r=" + cf.nonce + rfcSNon + ",s=" + rfcSalt + ",i=4096"
		if string(reply) != want {
			t.Fatalf("server-first %q; want %q", reply, want)
		}
	})
}

func FuzzScramClientFinal(f *testing.F) {
	f.Add([]byte(rfcC2))
	f.Add([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",x=y,p=" + rfcProof))
	f.Add([]byte("c=eSws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p=" + rfcProof))
	f.Fuzz(func(t *testing.T, final []byte) {
		s := rfcServer(t, map[string]ScramCredential{"user": rfcCredential(t)})
		if _, _, err := s.Step([]byte(rfcC1)); err != nil {
			t.Fatal(err)
		}
		reply, done, err := s.Step(final)
		if err != nil {
			var ae *AuthError
			if !errors.As(err, &ae) || done || reply != nil || ae.Public {
				t.Fatalf("%v %v %q", err, done, reply)
			}
			return
		}
		// Only the RFC's message (up to unused bits in the proof's
		// base64) knows the password.
		prefix := "c=biws,r=rOprNGfwEbeRWgbNEkqO" + rfcSNon + ",p="
		if !done || string(reply) != rfcS2 || !strings.HasPrefix(string(final), prefix) {
			t.Fatalf("accepted %q: %q %v", final, reply, done)
		}
		if s.AuthorizationID() != "user" {
			t.Fatal(s.AuthorizationID())
		}
	})
}

// quoteJAAS writes s as a double-quoted StreamTokenizer string.
func quoteJAAS(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

func FuzzParseJAAS(f *testing.F) {
	f.Add(`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="a\"b" user_admin="x";`)
	f.Add("a required k=v; /* c */ b optional 'k 2'=\"v\\101\";")
	f.Add("a required k=3;")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseJAAS(s)
		if err != nil {
			return
		}
		if len(ms) == 0 {
			t.Fatal("no modules and no error")
		}
		var b strings.Builder
		for _, m := range ms {
			switch m.Flag {
			case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
			default:
				t.Fatalf("flag %q", m.Flag)
			}
			if m.Class == "" || m.Options == nil {
				t.Fatalf("module %+v", m)
			}
			b.WriteString(quoteJAAS(m.Class) + " " + m.Flag)
			for k, v := range m.Options {
				b.WriteString(" " + quoteJAAS(k) + "=" + quoteJAAS(v))
			}
			b.WriteString(";\n")
		}
		// What was parsed, written back out, parses to the same modules.
		again, err := ParseJAAS(b.String())
		if err != nil || len(again) != len(ms) {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		for i := range ms {
			if again[i].Class != ms[i].Class || again[i].Flag != ms[i].Flag || len(again[i].Options) != len(ms[i].Options) {
				t.Fatalf("module %d: %+v vs %+v", i, again[i], ms[i])
			}
			for k, v := range ms[i].Options {
				if again[i].Options[k] != v {
					t.Fatalf("option %q: %q vs %q", k, again[i].Options[k], v)
				}
			}
		}
	})
}

func FuzzParseScramCredential(f *testing.F) {
	f.Add(rfcCredentialString)
	f.Add("salt=AA,stored_key=AAA,server_key=AA==,iterations=+8192,,")
	f.Add("abc")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseScramCredential(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidCredential) {
				t.Fatal(err)
			}
			return
		}
		back, err := ParseScramCredential(c.String())
		if err != nil || !credEqual(back, c) || back.String() != c.String() {
			t.Fatalf("round trip of %q: %+v %v", c.String(), back, err)
		}
	})
}
