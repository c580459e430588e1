package protocol

import (
	"testing"
)

func TestParseRequestHeader(t *testing.T) {
	flexibleAlways := func(int16, int16) bool { return true }
	tests := []struct {
		name     string
		frame    []byte
		flexible func(int16, int16) bool
		want     requestHeader
		clientID string // "<nil>" for null
		body     string
		wantErr  bool
	}{
		{name: "v1 null client id", frame: []byte{0, 3, 0, 4, 0, 0, 1, 2, 0xff, 0xff, 'b'},
			want: requestHeader{Key: 3, Version: 4, CorrelationID: 258}, clientID: "<nil>", body: "b"},
		{name: "v1 client id", frame: []byte{0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff, 0, 2, 'i', 'd', 'b'},
			want: requestHeader{Key: 0, Version: 9, CorrelationID: -1}, clientID: "id", body: "b"},
		{name: "v1 empty client id", frame: []byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0},
			want: requestHeader{Key: 0, Version: 9, CorrelationID: 1}, clientID: ""},
		{name: "v2 no tags", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0, 1, 'c', 0, 'b'}, flexible: flexibleAlways,
			want: requestHeader{Key: 18, Version: 3, CorrelationID: 1}, clientID: "c", body: "b"},
		{name: "v2 two tags", flexible: flexibleAlways,
			frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 2, 0, 1, 'x', 0x80, 0x01, 2, 'y', 'z', 'b'},
			want:  requestHeader{Key: 18, Version: 3, CorrelationID: 1}, clientID: "<nil>", body: "b"},
		{name: "v2 decided per key", flexible: func(key, _ int16) bool { return key == 18 },
			frame: []byte{0, 3, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 7},
			want:  requestHeader{Key: 3, Version: 3, CorrelationID: 1}, clientID: "<nil>", body: "\x07"},
		{name: "short", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0}, wantErr: true},
		{name: "client id length below -1", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xfe}, wantErr: true},
		{name: "client id overruns", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0, 3, 'a', 'b'}, wantErr: true},
		{name: "v2 missing tag buffer", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff}, flexible: flexibleAlways, wantErr: true},
		{name: "v2 tag overruns", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 1, 0, 5, 'x'}, flexible: flexibleAlways, wantErr: true},
		{name: "v2 unterminated uvarint", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 1, 0x80}, flexible: flexibleAlways, wantErr: true},
		{name: "v2 huge count", frame: []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0}, flexible: flexibleAlways, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := parseRequestHeader(tt.frame, tt.flexible)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error; got %+v", h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotID := "<nil>"
			if h.ClientID != nil {
				gotID = *h.ClientID
			}
			h.ClientID = nil
			if h != tt.want || gotID != tt.clientID || string(body) != tt.body {
				t.Fatalf("got %+v client id %q body %q; want %+v %q %q", h, gotID, body, tt.want, tt.clientID, tt.body)
			}
		})
	}
}

func TestAppendResponseHeader(t *testing.T) {
	if got := appendResponseHeader(nil, 0x01020304, false); string(got) != "\x01\x02\x03\x04" {
		t.Fatalf("v0: % x", got)
	}
	if got := appendResponseHeader([]byte{9}, -1, true); string(got) != "\x09\xff\xff\xff\xff\x00" {
		t.Fatalf("v1: % x", got)
	}
}
