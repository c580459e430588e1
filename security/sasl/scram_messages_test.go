package sasl

import (
	"maps"
	"testing"
)

func TestParseClientFirst(t *testing.T) {
	cases := []struct {
		msg   string
		ok    bool
		user  string
		authz string
		gs2   string
		bare  string
		ext   map[string]string
	}{
		{msg: "n,,n=user,r=abc", ok: true, user: "user", gs2: "n,,", bare: "n=user,r=abc"},
		{msg: "n,a=us=2Cer,n=us=2Cer,r=abc", ok: true, user: "us,er", authz: "us,er", gs2: "n,a=us=2Cer,", bare: "n=us=2Cer,r=abc"},
		{msg: "n,,n=a=3Db=2Cc,r=x", ok: true, user: "a=b,c", gs2: "n,,", bare: "n=a=3Db=2Cc,r=x"},
		{msg: "n,,n==3D2C,r=x", ok: true, user: "=2C", gs2: "n,,", bare: "n==3D2C,r=x"},
		{msg: "n,,m=ext,n=u,r=x", ok: true, user: "u", gs2: "n,,", bare: "m=ext,n=u,r=x"},
		{msg: "n,,n=u,r=x,tokenauth=true,a=b=c,a=d", ok: true, user: "u", gs2: "n,,", bare: "n=u,r=x,tokenauth=true,a=b=c,a=d",
			ext: map[string]string{"tokenauth": "true", "a": "d"}},
		{msg: "n,,n=u,r=!~\"}", ok: true, user: "u", gs2: "n,,", bare: "n=u,r=!~\"}"},
		{msg: "n,,n=u v,r=x", ok: true, user: "u v", gs2: "n,,", bare: "n=u v,r=x"},
		// Refused, as Kafka's ClientFirstMessage pattern refuses them.
		{msg: ""},
		{msg: "n,,"},
		{msg: "y,,n=u,r=x"},
		{msg: "p=tls-unique,,n=u,r=x"},
		{msg: "n,a=,n=u,r=x"},
		{msg: "n,,n=,r=x"},
		{msg: "n,,n=u,r="},
		{msg: "n,,n=u,r=x y"},
		{msg: "n,,n=u=2c,r=x"},
		{msg: "n,,n=u=,r=x"},
		{msg: "n,,n=u=3,r=x"},
		{msg: "n,,n=ü,r=x"},
		{msg: "n,,n=u\x00,r=x"},
		{msg: "n,,n=u,r=x,"},
		{msg: "n,,n=u,r=x,1=2"},
		{msg: "n,,n=u,r=x,k="},
		{msg: "n,,n=u,r=x,k"},
		{msg: "n,,m=,n=u,r=x"},
		{msg: "n,,m=a"},
		{msg: "n,,r=x,n=u"},
		{msg: "n,x,n=u,r=x"},
		{msg: "N,,n=u,r=x"},
	}
	for _, tc := range cases {
		cf, err := parseClientFirst(tc.msg)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.msg, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if cf.user != tc.user || cf.authzID != tc.authz || cf.gs2Header != tc.gs2 || cf.bare != tc.bare ||
			!maps.Equal(cf.extensions, tc.ext) {
			t.Errorf("%q: got %+v", tc.msg, cf)
		}
	}
}

func TestParseClientFinal(t *testing.T) {
	cases := []struct {
		msg     string
		ok      bool
		nonce   string
		without string
		proof   int
	}{
		{msg: "c=biws,r=abc,p=AAAA", ok: true, nonce: "abc", without: "c=biws,r=abc", proof: 3},
		{msg: "c=biws,r=abc,x=1,y=p=,p=AA==", ok: true, nonce: "abc", without: "c=biws,r=abc,x=1,y=p=", proof: 1},
		{msg: "c=biws,r=abc,p=q,p=AAA=", ok: true, nonce: "abc", without: "c=biws,r=abc,p=q", proof: 2},
		{msg: "c=,r=abc,p=", ok: true, nonce: "abc", without: "c=,r=abc", proof: 0},
		{msg: ""},
		{msg: "c=biws,r=abc"},
		{msg: "c=biws,r=abc,"},
		{msg: "c=biws,r=abc,p=A"},
		{msg: "c=biws,r=abc,p=AAAA,x=1"},
		{msg: "c=biw,r=abc,p=AAAA"},
		{msg: "c=biws,r=,p=AAAA"},
		{msg: "c=biws,r=abc,1=2,p=AAAA"},
		{msg: "c=biws,p=AAAA"},
		{msg: "r=abc,c=biws,p=AAAA"},
		{msg: "c=bi=s,r=abc,p=AAAA"},
		{msg: "c=biws,r=abc,p====="},
		{msg: "c=biws,r=abc,p=AAAA\n"},
	}
	for _, tc := range cases {
		cf, err := parseClientFinal(tc.msg)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.msg, err, tc.ok)
			continue
		}
		if tc.ok && (cf.nonce != tc.nonce || cf.withoutProof != tc.without || len(cf.proof) != tc.proof) {
			t.Errorf("%q: got %+v", tc.msg, cf)
		}
	}
}

// TestSaslName follows Kafka's ScramFormatterTest.saslName.
func TestSaslName(t *testing.T) {
	for _, user := range []string{"user1", "123", "1,2", "user=A", "user==B", "user,1", "user 1", ",", "=", ",=", "=="} {
		name := EscapeSaslName(user)
		got, ok := unescapeSaslName(name)
		if !ok || got != user {
			t.Errorf("%q → %q → %q %v", user, name, got, ok)
		}
		for i := 0; i < len(name); i++ {
			if name[i] == ',' {
				t.Errorf("%q has a comma", name)
			}
		}
	}
}
