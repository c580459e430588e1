package server

// The authorization matrix row of DescribeClientQuotas.

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func quotaCases(_ *authzFixture) []authzCase {
	return []authzCase{{
		// Quotas are configs of the cluster: DESCRIBE_CONFIGS on it, or
		// ALTER_CONFIGS, which implies it.
		name: "DescribeClientQuotas", key: 48, version: 1,
		acls: []aclSpec{clusterACL(opDescribeConfigs)}, codes: []int16{clusterDenied},
		alternatives: [][]aclSpec{{clusterACL(opAlterConfigs)}},
		notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe)}, clusterDenied}},
		build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
			if err := e.b.security.AlterUserConfig("quota-user", func(c map[string]string) error {
				c["producer_byte_rate"] = "1024"
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			req := kmsg.NewPtrDescribeClientQuotasRequest()
			c := kmsg.NewDescribeClientQuotasRequestComponent()
			c.EntityType, c.MatchType, c.Match = "user", quotaMatchExact, kmsg.StringPtr("quota-user")
			req.Components, req.Strict = []kmsg.DescribeClientQuotasRequestComponent{c}, true
			return req
		},
		check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
			r := resp.(*kmsg.DescribeClientQuotasResponse)
			if ph.denied {
				wantCode(t, "DescribeClientQuotas", r.ErrorCode, ph.code)
				if len(r.Entries) != 0 {
					t.Errorf("denied answer shows quotas: %+v", r.Entries)
				}
				return
			}
			wantCode(t, "DescribeClientQuotas", r.ErrorCode, 0)
			if len(r.Entries) != 1 || len(r.Entries[0].Values) != 1 || r.Entries[0].Values[0].Value != 1024 {
				t.Errorf("entries %+v", r.Entries)
			}
		},
	}, {
		name: "AlterClientQuotas", key: 49, version: 1,
		acls: []aclSpec{clusterACL(opAlterConfigs)}, codes: []int16{clusterDenied},
		notEnough: []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs)}, clusterDenied}},
		build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
			req := kmsg.NewPtrAlterClientQuotasRequest()
			entry := kmsg.NewAlterClientQuotasRequestEntry()
			ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
			ent.Type, ent.Name = "client-id", kmsg.StringPtr("authz-client")
			op := kmsg.NewAlterClientQuotasRequestEntryOp()
			op.Key, op.Value = "producer_byte_rate", 4096
			entry.Entity, entry.Ops = []kmsg.AlterClientQuotasRequestEntryEntity{ent}, []kmsg.AlterClientQuotasRequestEntryOp{op}
			req.Entries = []kmsg.AlterClientQuotasRequestEntry{entry}
			return req
		},
		check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
			r := resp.(*kmsg.AlterClientQuotasResponse)
			if len(r.Entries) != 1 {
				t.Fatalf("entries %+v", r.Entries)
			}
			wantCode(t, "AlterClientQuotas", r.Entries[0].ErrorCode, ph.code)
			if ph.denied {
				return
			}
			configs, err := e.b.security.EntityConfig("clients", "authz-client")
			if err != nil || configs["producer_byte_rate"] != "4096" {
				t.Errorf("stored configs %v (%v), want producer_byte_rate=4096", configs, err)
			}
		},
	}}
}
