package principal

import (
	"bytes"
	"context"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tlv is a minimal DER encoder for building names by hand (encoding/asn1
// sorts SET OF members, and these tests need any order and any tag).
func tlv(tag byte, content []byte) []byte {
	n := len(content)
	var out []byte
	out = append(out, tag)
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	default:
		out = append(out, 0x82, byte(n>>8), byte(n))
	}
	return append(out, content...)
}

func oidDER(t testing.TB, oid string) []byte {
	var parts asn1.ObjectIdentifier
	for _, f := range strings.Split(oid, ".") {
		var v int
		if _, err := fmt.Sscan(f, &v); err != nil {
			t.Fatalf("bad oid %q", oid)
		}
		parts = append(parts, v)
	}
	der, err := asn1.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// testAVA is one attribute: OID, value tag and raw value bytes.
type testAVA struct {
	oid   string
	tag   byte
	value string
}

// encodeName encodes RDNs in the order given (the least specific first, as
// in DER) and each RDN's AVAs in the order given.
func encodeName(t testing.TB, rdns ...[]testAVA) []byte {
	var seq []byte
	for _, rdn := range rdns {
		var set []byte
		for _, a := range rdn {
			set = append(set, tlv(0x30, append(oidDER(t, a.oid), tlv(a.tag, []byte(a.value))...))...)
		}
		seq = append(seq, tlv(0x31, set)...)
	}
	return tlv(0x30, seq)
}

func rdn(avas ...testAVA) []testAVA { return avas }

const (
	oidCN = "2.5.4.3"
	oidC  = "2.5.4.6"
	oidL  = "2.5.4.7"
	oidST = "2.5.4.8"
	oidO  = "2.5.4.10"
	oidOU = "2.5.4.11"
)

// dnCase pairs a name with the string Java renders for it, or "ERROR"
// for a name Java refuses to parse. The expected
// strings were produced by X500Principal.getName() on OpenJDK 17; the test
// below re-checks every one of them against the JVM on the machine.
type dnCase struct {
	name string
	der  func(testing.TB) []byte
	want string
}

func dnCases() []dnCase {
	utf8s := func(oid, v string) testAVA { return testAVA{oid, 12, v} }
	ps := func(oid, v string) testAVA { return testAVA{oid, 19, v} }
	return []dnCase{
		{"empty", func(t testing.TB) []byte { return encodeName(t) }, ""},
		{"order most specific first", func(t testing.TB) []byte {
			return encodeName(t, rdn(ps(oidC, "US")), rdn(utf8s(oidO, "kbroker")), rdn(utf8s(oidOU, "eng")), rdn(utf8s(oidCN, "client")))
		}, "CN=client,OU=eng,O=kbroker,C=US"},
		{"keywords", func(t testing.TB) []byte {
			return encodeName(t,
				rdn(utf8s("0.9.2342.19200300.100.1.25", "com")),
				rdn(utf8s("0.9.2342.19200300.100.1.25", "example")),
				rdn(utf8s(oidST, "CA")), rdn(utf8s(oidL, "SF")), rdn(utf8s("2.5.4.9", "1 Main St")),
				rdn(utf8s("0.9.2342.19200300.100.1.1", "alice")))
		}, "UID=alice,STREET=1 Main St,L=SF,ST=CA,DC=example,DC=com"},
		{"non RFC 2253 keywords are OIDs with hex", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{"1.2.840.113549.1.9.1", 22, "a@b.c"}), rdn(ps("2.5.4.5", "42")), rdn(utf8s("2.5.4.4", "Doe")), rdn(utf8s(oidCN, "x")))
		}, "CN=x,2.5.4.4=#0c03446f65,2.5.4.5=#13023432,1.2.840.113549.1.9.1=#16056140622e63"},
		{"escapees", func(t testing.TB) []byte {
			return encodeName(t, rdn(utf8s(oidCN, `a,b+c"d\e<f>g;h=i#j`)))
		}, `CN=a\,b\+c\"d\\e\<f\>g\;h\=i\#j`},
		{"leading hash and spaces", func(t testing.TB) []byte {
			return encodeName(t, rdn(utf8s(oidO, "  two  ")), rdn(utf8s(oidCN, "#x")))
		}, `CN=\#x,O=\ \ two\ \ `},
		{"carriage return and NUL", func(t testing.TB) []byte {
			return encodeName(t, rdn(utf8s(oidCN, "\ra\x00b\r")))
		}, "CN=\\\ra\\00b\\\r"},
		{"multi-valued RDN keeps encoded order", func(t testing.TB) []byte {
			return encodeName(t, rdn(ps(oidC, "US")), rdn(utf8s(oidOU, "b"), utf8s(oidCN, "a")))
		}, "OU=b+CN=a,C=US"},
		{"non-ASCII UTF-8", func(t testing.TB) []byte {
			return encodeName(t, rdn(utf8s(oidCN, "Zoë 名前")))
		}, "CN=Zoë 名前"},
		{"BMPString is UTF-16BE", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 30, "\x00Z\x00o\x00\xeb"}))
		}, "CN=Zoë"},
		{"BMPString unpaired surrogates and odd length", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 30, "\xdc\x00\x00a\xd8\x00\x00b\x00c\xd8\x00\x00"}))
		}, "CN=\ufffda\ufffdc\ufffd"},
		{"BMPString with a character outside the BMP is rejected", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 30, "\x00a\xd8\x3d\xde\x00"}))
		}, "ERROR"},
		{"T61String is ISO-8859-1", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 20, "Zo\xeb"}))
		}, "CN=Zoë"},
		{"PrintableString is ISO-8859-1", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 19, "名"}))
		}, "CN=\u00e5\u0090\u008d"},
		{"ill-formed UTF-8", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 12, "a\xed\xa0\x80b\xe2\x82c\xc0\xafd\xf0\x9f"}))
		}, "CN=a\ufffdb\ufffdc\ufffd\ufffdd\ufffd"},
		{"IA5String", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 22, "a@b"}))
		}, "CN=a@b"},
		{"NumericString is hex", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 18, "123"}))
		}, "CN=#1203313233"},
		{"OCTET STRING is hex", func(t testing.TB) []byte {
			return encodeName(t, rdn(testAVA{oidCN, 4, "\x01\xff"}))
		}, "CN=#040201ff"},
	}
}

// javaDNs runs testdata/PrintDN.java on the names and returns the JVM's
// renderings. A missing JDK fails the test: the comparison is the point.
func javaDNs(t *testing.T, names [][]byte) []string {
	t.Helper()
	javaPath, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is needed to check DN rendering against X500Principal: %v", err)
	}
	var in bytes.Buffer
	for _, n := range names {
		in.WriteString(hex.EncodeToString(n))
		in.WriteByte('\n')
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src, err := filepath.Abs(filepath.Join("testdata", "PrintDN.java"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, javaPath, src)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java PrintDN: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(names) == 0 {
		lines = nil
	}
	if len(lines) != len(names) {
		t.Fatalf("java printed %d lines for %d names", len(lines), len(names))
	}
	res := make([]string, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, "ERROR ") {
			res[i] = l
			continue
		}
		b, err := hex.DecodeString(l)
		if err != nil {
			t.Fatalf("java line %d: %v", i, err)
		}
		res[i] = string(b)
	}
	return res
}

// randomName builds a name from a small alphabet of attribute types, string
// tags and characters chosen to hit every escaping and decoding rule.
func randomName(t testing.TB, r *rand.Rand) []byte {
	oids := []string{oidCN, oidC, oidL, oidST, oidO, oidOU, "2.5.4.9", "0.9.2342.19200300.100.1.25",
		"0.9.2342.19200300.100.1.1", "2.5.4.5", "1.2.840.113549.1.9.1", "1.3.6.1.4.1.99999.1"}
	tags := []byte{12, 12, 12, 19, 20, 22, 27, 30, 18, 26, 28, 4, 2}
	pieces := []string{"a", "Z", "0", " ", "  ", ",", "+", "\"", "\\", "<", ">", ";", "=", "#", "\r", "\n",
		"\x00", "\t", "é", "名", "\U0001F600", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f", "\x80", "\xf4\x90", "\xe0\x80", "\xf5", "\xc1", "\xf0\x9f\x98", "\xef\xbf\xbf"}
	var rdns [][]testAVA
	for range r.IntN(4) + 1 {
		var one []testAVA
		for range r.IntN(3) + 1 {
			var v strings.Builder
			for range r.IntN(6) {
				v.WriteString(pieces[r.IntN(len(pieces))])
			}
			one = append(one, testAVA{oids[r.IntN(len(oids))], tags[r.IntN(len(tags))], v.String()})
		}
		rdns = append(rdns, one)
	}
	return encodeName(t, rdns...)
}

func TestFormatDNMatchesJava(t *testing.T) {
	cases := dnCases()
	var names [][]byte
	for _, c := range cases {
		names = append(names, c.der(t))
	}
	r := rand.New(rand.NewPCG(1, 2))
	const randomCount = 1500
	for range randomCount {
		names = append(names, randomName(t, r))
	}
	java := javaDNs(t, names)
	for i, c := range cases {
		if c.name == "T61String is ISO-8859-1" && java[i] == "CN=Zo\ufffd" {
			t.Fatalf("the JVM on PATH reads every string type as UTF-8, as JDKs before JDK-8349890 (2025) did; " +
				"the table and FormatDN follow current JDK updates: update the JDK (.ci/run does)")
		}
	}
	for i, c := range cases {
		got, err := FormatDN(names[i])
		if c.want == "ERROR" {
			if err == nil {
				t.Errorf("%s: FormatDN = %q, want an error", c.name, got)
			}
			if !strings.HasPrefix(java[i], "ERROR ") {
				t.Errorf("%s: java says %q, the table says it is refused", c.name, java[i])
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: FormatDN: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: FormatDN = %q, want %q", c.name, got, c.want)
		}
		if java[i] != c.want {
			t.Errorf("%s: java says %q, the table says %q", c.name, java[i], c.want)
		}
	}
	mismatches := 0
	for i := len(cases); i < len(names); i++ {
		got, err := FormatDN(names[i])
		if err != nil {
			got = "ERROR " + err.Error()
		}
		if strings.HasPrefix(java[i], "ERROR ") != strings.HasPrefix(got, "ERROR ") ||
			(!strings.HasPrefix(got, "ERROR ") && got != java[i]) {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("name %x:\n go   %q\n java %q", names[i], got, java[i])
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d random names differ from Java", mismatches, randomCount)
	}
}
