package server

// ApiVersions, versions 0-4.
//
// A request newer than we serve arrives here as v0 with RequestedVersion
// set (the protocol layer decodes nothing of it): the answer is
// UNSUPPORTED_VERSION plus the supported ranges, in a v0 response, so the
// client retries with a version we know (KIP-511).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.ApiVersions.Int16(), 0, 4, handleApiVersions) }

func handleApiVersions(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(req.Version)
	resp.ApiKeys = supportedAPIs()
	if req.RequestedVersion > req.Version {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return protocol.Response{Msg: resp}
	}
	if r, ok := req.Body.(*kmsg.ApiVersionsRequest); ok && req.Version >= 3 {
		// KIP-511: client software name and version must be non-empty and
		// made of [a-zA-Z0-9._-], starting and ending with an alphanumeric.
		if !validClientSoftware(r.ClientSoftwareName) || !validClientSoftware(r.ClientSoftwareVersion) {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return protocol.Response{Msg: resp}
		}
	}
	return protocol.Response{Msg: resp}
}

func validClientSoftware(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return alnum(s[0]) && alnum(s[len(s)-1])
}
