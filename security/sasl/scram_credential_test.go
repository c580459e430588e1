package sasl

import (
	"bytes"
	"errors"
	"testing"
)

// The RFC 7677 credential in Kafka's ZooKeeper text form. The keys were
// cross-checked with an independent PBKDF2/HMAC implementation, and
// TestScramRFC7677 shows they verify the RFC's proof and produce its
// server signature.
const rfcCredentialString = "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=," +
	"server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096"

func TestScramCredentialString(t *testing.T) {
	c := rfcCredential(t)
	if got := c.String(); got != rfcCredentialString {
		t.Fatalf("String = %q", got)
	}
	back, err := ParseScramCredential(rfcCredentialString)
	if err != nil {
		t.Fatal(err)
	}
	if !credEqual(back, c) {
		t.Fatalf("round trip: %+v", back)
	}
}

func credEqual(a, b ScramCredential) bool {
	return bytes.Equal(a.Salt, b.Salt) && bytes.Equal(a.StoredKey, b.StoredKey) &&
		bytes.Equal(a.ServerKey, b.ServerKey) && a.Iterations == b.Iterations
}

// TestScramCredentialFromSaltedPassword uses the salt and salted password of
// Kafka's ScramParserTest / FormatterTest (kafka-storage's add-scram and
// AlterUserScramCredentials carry a salted password, not a password).
func TestScramCredentialFromSaltedPassword(t *testing.T) {
	wantSalt := []byte{49, 108, 118, 52, 112, 100, 110, 119, 52, 102, 119, 113,
		55, 110, 111, 116, 99, 120, 109, 48, 121, 121, 49, 107, 55, 113}
	salted8 := []int8{-103, 61, 50, -55, 69, 49, -98, 82, 90, 11, -33, 71, 94,
		4, 83, 73, -119, 91, -70, -90, -72, 21, 33, -83, 36,
		34, 95, 76, -53, -29, 96, 33}
	wantSalted := make([]byte, len(salted8))
	for i, v := range salted8 {
		wantSalted[i] = byte(v)
	}
	salt, err := javaBase64("MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=")
	if err != nil || !bytes.Equal(salt, wantSalt) {
		t.Fatalf("salt %v %v", salt, err)
	}
	salted, err := javaBase64("mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=")
	if err != nil || !bytes.Equal(salted, wantSalted) {
		t.Fatalf("salted %v %v", salted, err)
	}
	cases := []struct {
		mech, stored, server string
	}{
		{ScramSHA256, "XTIqoHHo3sscdYxycL07uh8utmHn9fXtjqyDF67CjSU=", "Za53R2yENISN7fHL7WUxriFkV7cfbrO3+CtEptMbTPE="},
		{ScramSHA512, "OTJaI0xrVVArw2MNM35eGNVvo7ZObfdmB6j25TPoky/3TryBqVyDO+xwZ9ayp2b8vlAyTuh3zIGiJpXG5PlNBQ==",
			"SAFtavLze+JBSMhVmVxQOuH5mRkdsrE4CjtIl/LA+59pwoSC4fkJx8n+JnF+LKedPZWTai2bvkCoctFtn9zZxw=="},
	}
	for _, tc := range cases {
		c, err := ScramCredentialFromSaltedPassword(tc.mech, salted, salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		want := "salt=MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=,stored_key=" + tc.stored + ",server_key=" + tc.server + ",iterations=4096"
		if c.String() != want {
			t.Errorf("%s: %s\nwant %s", tc.mech, c, want)
		}
	}
	if _, err := ScramCredentialFromSaltedPassword("PLAIN", salted, salt, 4096); err == nil {
		t.Error("PLAIN accepted")
	}
}

func TestNewScramCredential(t *testing.T) {
	for _, mech := range ScramMechanisms() {
		m := lookupMech(mech)
		c, err := NewScramCredential(mech, "password", []byte("salt"), 4096)
		if err != nil {
			t.Fatal(err)
		}
		// The same credential through the salted-password path.
		c2, _ := ScramCredentialFromSaltedPassword(mech, pbkdf2Salted(t, m, "password", []byte("salt"), 4096), []byte("salt"), 4096)
		if !credEqual(c, c2) || len(c.StoredKey) != m.size || len(c.ServerKey) != m.size {
			t.Fatalf("%s: %+v vs %+v", mech, c, c2)
		}
		// A different salt gives a different credential (Kafka's
		// ScramCredentialUtilsTest.generateCredential).
		c3, _ := NewScramCredential(mech, "password", []byte("salt2"), 4096)
		if c3.String() == c.String() {
			t.Fatal("salt ignored")
		}
	}
	for _, it := range []int{0, -1} {
		if _, err := NewScramCredential(ScramSHA256, "p", nil, it); err == nil {
			t.Errorf("iterations %d accepted", it)
		}
	}
	if _, err := NewScramCredential("SCRAM-SHA-1", "p", nil, 4096); err == nil {
		t.Error("SCRAM-SHA-1 accepted")
	}
}

func TestParseScramCredential(t *testing.T) {
	good := rfcCredentialString
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"kafka invalidCredential", "abc", false},
		{"kafka missingFields", good[len("salt=W22ZaJ0SNY7soEsUEjb6gQ=="):], false},
		{"kafka extraneousFields", good + ",a=test", false},
		{"empty", "", false},
		{"field order free", "iterations=4096,server_key=AA==,stored_key=AA==,salt=AA==", true},
		{"trailing commas dropped like Java's split", good + ",,", true},
		{"leading comma", "," + good, false},
		{"empty piece", "salt=AA==,,stored_key=AA==,server_key=AA==,iterations=1", false},
		{"empty key", good + ",=x", false},
		{"duplicate key, later wins", "salt=AA==," + good, true},
		{"missing iterations, duplicate salt", "salt=AA==,salt=AA==,stored_key=AA==,server_key=AA==", false},
		{"unpadded base64 (Java accepts)", "salt=AA,stored_key=AAA,server_key=AA==,iterations=1", true},
		{"bad padding", "salt=AA=,stored_key=AA==,server_key=AA==,iterations=1", false},
		{"line break in base64", "salt=AA\n==,stored_key=AA==,server_key=AA==,iterations=1", false},
		{"url alphabet", "salt=-_==,stored_key=AA==,server_key=AA==,iterations=1", false},
		{"empty salt", "salt=,stored_key=AA==,server_key=AA==,iterations=1", true},
		{"plus sign iterations", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=+8192", true},
		{"iterations overflow int32", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=2147483648", false},
		{"iterations not a number", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=4k", false},
		{"iterations empty", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=", false},
		{"value with equals", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=1=2", false},
	}
	for _, tc := range cases {
		_, err := ParseScramCredential(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %q: err %v", tc.name, tc.in, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidCredential) {
			t.Errorf("%s: error %v is not ErrInvalidCredential", tc.name, err)
		}
	}
	c, err := ParseScramCredential("salt=AA,stored_key=AAA,server_key=AA==,iterations=+8192")
	if err != nil || !bytes.Equal(c.Salt, []byte{0}) || !bytes.Equal(c.StoredKey, []byte{0, 0}) || c.Iterations != 8192 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestMechanismType(t *testing.T) {
	cases := []struct {
		name string
		typ  int8
		ok   bool
	}{{ScramSHA256, 1, true}, {ScramSHA512, 2, true}, {"PLAIN", 0, false}, {"SCRAM-SHA-1", 0, false}, {"scram-sha-256", 0, false}}
	for _, tc := range cases {
		typ, ok := MechanismType(tc.name)
		if typ != tc.typ || ok != tc.ok || IsScram(tc.name) != tc.ok {
			t.Errorf("MechanismType(%q) = %d %v", tc.name, typ, ok)
		}
		if tc.ok {
			if name, ok := MechanismName(tc.typ); !ok || name != tc.name {
				t.Errorf("MechanismName(%d) = %q %v", tc.typ, name, ok)
			}
		}
	}
	for _, typ := range []int8{0, 3, -1} {
		if name, ok := MechanismName(typ); ok {
			t.Errorf("MechanismName(%d) = %q", typ, name)
		}
	}
}

func TestValidateIterations(t *testing.T) {
	cases := []struct {
		n   int
		err error
	}{{4095, ErrTooFewIterations}, {4096, nil}, {8192, nil}, {16384, nil}, {16385, ErrTooManyIterations}, {-1, ErrTooFewIterations}}
	for _, tc := range cases {
		if err := ValidateIterations(tc.n); err != tc.err {
			t.Errorf("ValidateIterations(%d) = %v", tc.n, err)
		}
	}
	if ErrTooFewIterations.Error() != "Too few iterations" || ErrTooManyIterations.Error() != "Too many iterations" {
		t.Error("texts differ from Kafka's ScramControlManager")
	}
}
