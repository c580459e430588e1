package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SCRAM credentials made with AlterUserScramCredentials are described
// with their iterations, refused with Kafka's error codes when the
// request is illegal, and deleted.
func TestUserSCRAMCredentials(t *testing.T) {
	ab := startAdminBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := ab.adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "alice-secret"},
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for u, r := range res {
		if r.Err != nil {
			t.Errorf("upsert %s: %v", u, r.Err)
		}
	}
	described, err := ab.adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alice := described["alice"]
	if alice.Err != nil || len(alice.CredInfos) != 2 || alice.CredInfos[1].Iterations != 8192 || len(described["bob"].CredInfos) != 1 {
		t.Fatalf("described %+v", described)
	}

	raw := func(req *kmsg.AlterUserSCRAMCredentialsRequest) map[string]int16 {
		t.Helper()
		resp := request[*kmsg.AlterUserSCRAMCredentialsResponse](t, ab.cl, req)
		out := map[string]int16{}
		for _, r := range resp.Results {
			out[r.User] = r.ErrorCode
		}
		return out
	}
	upsert := func(user string, mech int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iterations, []byte("salt"), make([]byte, 32)
		return u
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		upsert("few", 1, 100), upsert("many", 1, 20000), upsert("unknown", 9, 4096), upsert("", 1, 4096),
		upsert("twice", 1, 4096), upsert("twice", 1, 4096),
	}
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = "bob", 1 // bob has SCRAM-SHA-512 only
	req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{d}
	want := map[string]int16{
		"few": kerr.UnacceptableCredential.Code, "many": kerr.UnacceptableCredential.Code,
		"unknown": kerr.UnsupportedSaslMechanism.Code, "": kerr.UnacceptableCredential.Code,
		"twice": kerr.DuplicateResource.Code, "bob": kerr.ResourceNotFound.Code,
	}
	got := raw(req)
	for u, code := range want {
		if got[u] != code {
			t.Errorf("user %q: error %d, want %d", u, got[u], code)
		}
	}

	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, n := range []string{"alice", "nobody", "alice"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = n
		dreq.Users = append(dreq.Users, u)
	}
	dresp := request[*kmsg.DescribeUserSCRAMCredentialsResponse](t, ab.cl, dreq)
	codes := map[string]int16{}
	for _, r := range dresp.Results {
		codes[r.User] = r.ErrorCode
	}
	if len(dresp.Results) != 2 || codes["alice"] != kerr.DuplicateResource.Code || codes["nobody"] != kerr.ResourceNotFound.Code {
		t.Errorf("describe named users: %+v", dresp.Results)
	}

	if _, err := ab.adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha512}}, nil); err != nil {
		t.Fatal(err)
	}
	described, err = ab.adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := described["bob"]; ok || len(described) != 1 {
		t.Errorf("after deleting bob's only credential: %+v", described)
	}
}
