package principal

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Principal
		wantErr bool
	}{
		{in: "User:alice", want: Principal{"User", "alice"}},
		{in: "User:CN=a,O=b:c", want: Principal{"User", "CN=a,O=b:c"}},
		{in: "Group:", want: Principal{"Group", ""}},
		{in: ":x", want: Principal{"", "x"}},
		{in: ":", want: Principal{"", ""}},
		{in: "", wantErr: true},
		{in: "alice", wantErr: true},
	} {
		got, err := Parse(c.in)
		if c.wantErr {
			if !errors.Is(err, ErrPrincipalFormat) {
				t.Errorf("Parse(%q) = %v, %v; want ErrPrincipalFormat", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if got.String() != c.in {
			t.Errorf("Parse(%q).String() = %q", c.in, got.String())
		}
	}
	if Anonymous.String() != "User:ANONYMOUS" {
		t.Errorf("Anonymous = %s", Anonymous)
	}
}

func testCert(t *testing.T, subject pkix.Name) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: subject, NotBefore: now, NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestDistinguishedNameOfCertificate(t *testing.T) {
	cert := testCert(t, pkix.Name{
		CommonName:         "client, one",
		OrganizationalUnit: []string{"eng"},
		Organization:       []string{"kbroker"},
		Country:            []string{"US"},
	})
	// Go writes C, O, OU, CN in that order; Java reads the last RDN first.
	if got, want := DistinguishedName(cert), `CN=client\, one,OU=eng,O=kbroker,C=US`; got != want {
		t.Errorf("DistinguishedName = %q, want %q", got, want)
	}
	if DistinguishedName(nil) != "" {
		t.Error("DistinguishedName(nil) is not empty")
	}
}

func TestFromCertificate(t *testing.T) {
	cert := testCert(t, pkix.Name{CommonName: "Duke", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"Org"}})
	lower, err := ParseSSLMappingRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L,DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	none, err := ParseSSLMappingRules("RULE:^CN=x$/x/")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		cert    *x509.Certificate
		m       *SSLMapper
		want    Principal
		wantErr error
	}{
		{"no certificate is anonymous", nil, lower, Anonymous, nil},
		{"nil mapper is DEFAULT", cert, nil, User("CN=Duke,OU=ServiceUsers,O=Org"), nil},
		{"mapped", cert, lower, User("duke"), nil},
		{"no rule applies", cert, none, Principal{}, ErrNoMatchingRule},
	} {
		got, err := FromCertificate(c.cert, c.m)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: FromCertificate = %v, %v; want %v", c.name, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: FromCertificate = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
