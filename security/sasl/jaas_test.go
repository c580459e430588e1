package sasl

import (
	"maps"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	type mod = LoginModule
	opts := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name string
		in   string
		want []mod
		err  string
	}{
		// Kafka's JaasContextTest.
		{name: "no options", in: "test.testConfigNoOptions required;",
			want: []mod{{"test.testConfigNoOptions", "REQUIRED", opts()}}},
		{name: "control flags", in: "a required; b requisite p=v; c sufficient p=v; d optional p=v;",
			want: []mod{{"a", "REQUIRED", opts()}, {"b", "REQUISITE", opts("p", "v")},
				{"c", "SUFFICIENT", opts("p", "v")}, {"d", "OPTIONAL", opts("p", "v")}}},
		{name: "single option", in: "test.testSingleOption requisite propName=propValue;",
			want: []mod{{"test.testSingleOption", "REQUISITE", opts("propName", "propValue")}}},
		{name: "multiple options", in: "m sufficient propName0=propValue0 propName1=propValue1 propName9=propValue9;",
			want: []mod{{"m", "SUFFICIENT", opts("propName0", "propValue0", "propName1", "propValue1", "propName9", "propValue9")}}},
		{name: "quoted option value",
			in:   `test.testQuotedOptionValue required propName="prop value" propName2="value1 = 1, value2 = 2";`,
			want: []mod{{"test.testQuotedOptionValue", "REQUIRED", opts("propName", "prop value", "propName2", "value1 = 1, value2 = 2")}}},
		{name: "quoted option name", in: `test.testQuotedOptionName required "prop name"=propValue;`,
			want: []mod{{"test.testQuotedOptionName", "REQUIRED", opts("prop name", "propValue")}}},
		{name: "multiple login modules",
			in: " test.Module0 required index=Index0 module=Module0; test.Module1 required index=Index1 module=Module1;" +
				" test.Module2 required index=Index2 module=Module2;",
			want: []mod{{"test.Module0", "REQUIRED", opts("index", "Index0", "module", "Module0")},
				{"test.Module1", "REQUIRED", opts("index", "Index1", "module", "Module1")},
				{"test.Module2", "REQUIRED", opts("index", "Index2", "module", "Module2")}}},
		{name: "missing login module", in: "  required option1=value1;",
			err: "Invalid login module control flag 'option1' in JAAS config"},
		{name: "missing control flag", in: "test.loginModule option1=value1;",
			err: "Invalid login module control flag 'option1' in JAAS config"},
		{name: "missing option value", in: "loginModule required option1;",
			err: "Value not specified for key 'option1' in JAAS config"},
		{name: "missing semicolon", in: "test.testMissingSemicolon required option1=value1",
			err: "JAAS config entry not terminated by semi-colon"},
		{name: "numeric option without quotes", in: "test.testNumericOptionWithoutQuotes required option1=3;",
			err: "Value not specified for key 'option1' in JAAS config"},
		{name: "invalid control flag", in: "test.testInvalidControlFlag { option1=3;",
			err: "Login module control flag is not available in the JAAS config"},
		{name: "numeric option with quotes", in: `test.testNumericOptionWithQuotes required option1="3";`,
			want: []mod{{"test.testNumericOptionWithQuotes", "REQUIRED", opts("option1", "3")}}},

		// Kafka's documented broker configuration.
		{name: "plain broker",
			in: "org.apache.kafka.common.security.plain.PlainLoginModule required\n" +
				"    username=\"admin\"\n    password=\"admin-secret\"\n" +
				"    user_admin=\"admin-secret\"\n    user_alice=\"alice-secret\";",
			want: []mod{{PlainLoginModuleClass, "REQUIRED", opts("username", "admin", "password", "admin-secret",
				"user_admin", "admin-secret", "user_alice", "alice-secret")}}},

		// StreamTokenizer behaviour.
		{name: "flag case-insensitive", in: "a ReQuIrEd;", want: []mod{{"a", "REQUIRED", opts()}}},
		{name: "quoted class and flag", in: `"a b" "optional";`, want: []mod{{"a b", "OPTIONAL", opts()}}},
		{name: "word characters", in: "a-b.c_d$e9 required k=x-1.2_$;",
			want: []mod{{"a-b.c_d$e9", "REQUIRED", opts("k", "x-1.2_$")}}},
		{name: "single quotes", in: `a required k='it''s';`,
			err: "Value not specified for key 's' in JAAS config"},
		{name: "single quoted", in: `a required k='say "hi"';`, want: []mod{{"a", "REQUIRED", opts("k", `say "hi"`)}}},
		{name: "escapes", in: `a required k="q\"b\\c\n\101\7z\477\x";`,
			want: []mod{{"a", "REQUIRED", opts("k", "q\"b\\c\nA\x07z'7x")}}},
		{name: "unicode words", in: "a required k=ünï日本;", want: []mod{{"a", "REQUIRED", opts("k", "ünï日本")}}},
		{name: "C1 control is ordinary", in: "a required k=\u0085;", err: "Value not specified for key 'k' in JAAS config"},
		{name: "quote ends at newline", in: "a required k=\"abc\n;", want: []mod{{"a", "REQUIRED", opts("k", "abc")}}},
		{name: "comments", in: "/* lead */ a required // the flag\n k=v /* mid */; // tail",
			want: []mod{{"a", "REQUIRED", opts("k", "v")}}},
		{name: "lone slash comment", in: "a required k=v; / ignored\nb optional;",
			want: []mod{{"a", "REQUIRED", opts("k", "v")}, {"b", "OPTIONAL", opts()}}},
		{name: "lone slash swallows the next line", in: "a required k=v /\nb=c;\n",
			err: "JAAS config entry not terminated by semi-colon"},
		{name: "block comment not closed across a line break", in: "a required /* *\n/ k=v; */ x=y;",
			want: []mod{{"a", "REQUIRED", opts("x", "y")}}},
		{name: "unterminated block comment", in: "a required; /* b required;",
			want: []mod{{"a", "REQUIRED", opts()}}},
		{name: "later duplicate wins", in: "a required k=v k=w;", want: []mod{{"a", "REQUIRED", opts("k", "w")}}},
		{name: "no space around =", in: `a required k="v"j=w;`, want: []mod{{"a", "REQUIRED", opts("k", "v", "j", "w")}}},
		{name: "empty quoted value", in: `a required k="";`, want: []mod{{"a", "REQUIRED", opts("k", "")}}},
		{name: "empty", in: "", err: "Login module not specified in JAAS config"},
		{name: "only comments", in: " // x\n /* y */ ", err: "Login module not specified in JAAS config"},
		{name: "flag missing at end", in: "a", err: "Login module control flag not specified in JAAS config"},
		{name: "semicolon as flag", in: "a;", err: "Login module control flag is not available in the JAAS config"},
		{name: "bad flag", in: "a bogus;", err: "Invalid login module control flag 'bogus' in JAAS config"},
		{name: "leading minus is a lone char", in: "-a required;", err: "Invalid login module control flag 'a' in JAAS config"},
		{name: "numeric class", in: ".5 required;", err: "Login module class name not specified in JAAS config"},
		{name: "empty class", in: `"" required;`, err: "Login module class name not specified in JAAS config"},
		{name: "value is semicolon", in: "a required k=;", err: "Value not specified for key 'k' in JAAS config"},
		{name: "value missing at end", in: "a required k=", err: "Value not specified for key 'k' in JAAS config"},
		{name: "numeric key", in: "a required 3=v;", err: "Invalid option name in JAAS config"},
		{name: "ordinary char key", in: "a required {=v;", err: "Invalid option name in JAAS config"},
		{name: "ordinary char key without =", in: "a required { k=v;", err: "Value not specified for key 'null' in JAAS config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJAAS(tc.in)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err %v; want %q (got %+v)", err, tc.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v", got)
			}
			for i := range got {
				if got[i].Class != tc.want[i].Class || got[i].Flag != tc.want[i].Flag || !maps.Equal(got[i].Options, tc.want[i].Options) {
					t.Fatalf("module %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestJAASTokenizerEdges(t *testing.T) {
	cases := []struct {
		in   string
		want []jaasToken
	}{
		{`"abc\`, []jaasToken{{kind: tokQuoted, ch: '"', text: "abc\uFFFF"}}},
		{`"abc`, []jaasToken{{kind: tokQuoted, ch: '"', text: "abc"}}},
		{"-", []jaasToken{{kind: tokChar, ch: '-'}}},
		{"-1.2.3x", []jaasToken{{kind: tokNumber}, {kind: tokNumber}, {kind: tokWord, text: "x"}}},
		{"a/b", []jaasToken{{kind: tokWord, text: "a"}}},
		{"a//b\nc", []jaasToken{{kind: tokWord, text: "a"}, {kind: tokWord, text: "c"}}},
		{"/**/a", []jaasToken{{kind: tokWord, text: "a"}}},
		{"/*/a", nil},
		{`"\0\12\123\1234"`, []jaasToken{{kind: tokQuoted, ch: '"', text: "\x00\n\x53\x534"}}},
	}
	for _, tc := range cases {
		tz := newJAASTokenizer(tc.in)
		var got []jaasToken
		for range 100 {
			tok := tz.next()
			if tok.kind == tokEOF {
				break
			}
			got = append(got, tok)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %+v", tc.in, got)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: token %d = %+v, want %+v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

func TestParseJAASBound(t *testing.T) {
	if _, err := ParseJAAS("a required k=\"" + strings.Repeat("x", MaxJAASSize) + "\";"); err == nil {
		t.Fatal("oversize JAAS text accepted")
	}
}

func TestParseJAASProperty(t *testing.T) {
	m, err := ParseJAASProperty(ScramLoginModuleClass + ` required username="alice" password="alice-secret";`)
	if err != nil || m.Class != ScramLoginModuleClass || m.Options["username"] != "alice" {
		t.Fatalf("%+v %v", m, err)
	}
	_, err = ParseJAASProperty("a required; b required; c required;")
	if err == nil || err.Error() != "JAAS config property contains 3 login modules, should be 1 module" {
		t.Fatal(err)
	}
	if _, err = ParseJAASProperty(""); err == nil || err.Error() != "Login module not specified in JAAS config" {
		t.Fatal(err)
	}
}

func TestPlainUsers(t *testing.T) {
	ms, err := ParseJAAS(PlainLoginModuleClass + ` required username="admin" password="admin-secret"` +
		` user_admin="admin-secret" user_alice="alice-secret" user_="empty" "user_a,b"="c";` +
		` other.Module required user_bob="bob-secret";` +
		PlainLoginModuleClass + ` optional user_alice="second" user_carol="carol";`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"admin": "admin-secret", "alice": "alice-secret", "": "empty", "a,b": "c", "carol": "carol"}
	if got := PlainUsers(ms); !maps.Equal(got, want) {
		t.Fatalf("PlainUsers = %v", got)
	}
	if got := PlainUsers(nil); len(got) != 0 {
		t.Fatal(got)
	}
}

func TestClientCredentials(t *testing.T) {
	cases := []struct {
		in         string
		user, pass string
		ok         bool
	}{
		{PlainLoginModuleClass + ` required username="admin" password="admin-secret" user_admin="admin-secret";`, "admin", "admin-secret", true},
		{ScramLoginModuleClass + ` required username="alice" password="";`, "alice", "", true},
		{`a required k=v; ` + ScramLoginModuleClass + ` required username="bob" password="p";`, "bob", "p", true},
		{PlainLoginModuleClass + ` required username="admin";`, "admin", "", false},
		{PlainLoginModuleClass + ` required password="x";`, "", "", false},
	}
	for _, tc := range cases {
		ms, err := ParseJAAS(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		u, p, ok := ClientCredentials(ms)
		if u != tc.user || p != tc.pass || ok != tc.ok {
			t.Errorf("%q: %q %q %v", tc.in, u, p, ok)
		}
	}
}
