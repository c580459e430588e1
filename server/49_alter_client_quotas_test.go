package server

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/logstore"
)

type quotaOp struct {
	key    string
	value  float64
	remove bool
}

func quotaEntry(entity []kmsg.AlterClientQuotasRequestEntryEntity, ops ...quotaOp) kmsg.AlterClientQuotasRequestEntry {
	e := kmsg.NewAlterClientQuotasRequestEntry()
	e.Entity = entity
	for _, o := range ops {
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value, op.Remove = o.key, o.value, o.remove
		e.Ops = append(e.Ops, op)
	}
	return e
}

func ent(pairs ...*string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i+1 < len(pairs); i += 2 {
		e := kmsg.NewAlterClientQuotasRequestEntryEntity()
		e.Type, e.Name = *pairs[i], pairs[i+1]
		out = append(out, e)
	}
	return out
}

func alterQuotas(t *testing.T, cl *kgo.Client, validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) *kmsg.AlterClientQuotasResponse {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries, req.ValidateOnly = entries, validateOnly
	return request[*kmsg.AlterClientQuotasResponse](t, cl, req)
}

// Each bad entry gets the code and message ZooKeeper-mode Kafka's
// ZkAdminManager.alterClientQuotas gives it (non-positive values: the
// KRaft controller's), and nothing is written.
func TestAlterClientQuotasValidation(t *testing.T) {
	ab := startAdminBroker(t)
	s := kmsg.StringPtr
	user, client, ip := s("user"), s("client-id"), s("ip")
	invalid := kerr.InvalidRequest.Code
	for _, tc := range []struct {
		name  string
		entry kmsg.AlterClientQuotasRequestEntry
		code  int16
		msg   string
	}{
		{"empty entity", quotaEntry(nil, quotaOp{key: "producer_byte_rate", value: 1}), invalid, "Invalid empty client quota entity"},
		{"unknown entity type", quotaEntry(ent(s("group"), s("g")), quotaOp{key: "producer_byte_rate", value: 1}), invalid, "Unhandled client quota entity type: group"},
		{"empty user", quotaEntry(ent(user, s("")), quotaOp{key: "producer_byte_rate", value: 1}), invalid, "Empty user not supported"},
		{"empty client id", quotaEntry(ent(client, s("")), quotaOp{key: "producer_byte_rate", value: 1}), invalid, "Empty client-id not supported"},
		{"ip with user", quotaEntry(ent(ip, s("127.0.0.1"), user, s("u")), quotaOp{key: "connection_creation_rate", value: 1}), invalid,
			"Invalid quota entity combination, IP entity should not be used with user/client ID entity."},
		{"bad ip", quotaEntry(ent(ip, s("not an ip")), quotaOp{key: "connection_creation_rate", value: 1}), invalid, "not%20an%20ip is not a valid IP or resolvable host."},
		{"unknown key", quotaEntry(ent(client, s("c")), quotaOp{key: "producer_byte_rat", value: 1}), invalid, "Invalid configuration key producer_byte_rat"},
		{"ip key on a client", quotaEntry(ent(client, s("c")), quotaOp{key: "connection_creation_rate", value: 1}), invalid, "Invalid configuration key connection_creation_rate"},
		{"client key on an ip", quotaEntry(ent(ip, s("127.0.0.1")), quotaOp{key: "producer_byte_rate", value: 1}), invalid, "Invalid configuration key producer_byte_rate"},
		{"negative rate", quotaEntry(ent(user, s("u")), quotaOp{key: "producer_byte_rate", value: -5}), invalid, "Quota producer_byte_rate must be greater than 0"},
		{"zero percentage", quotaEntry(ent(user, nil), quotaOp{key: "request_percentage", value: 0}), invalid, "Quota request_percentage must be greater than 0"},
		{"fractional byte rate", quotaEntry(ent(client, s("c")), quotaOp{key: "consumer_byte_rate", value: 1.5}), invalid, "Configuration consumer_byte_rate must be a LONG value"},
		{"fractional connection rate", quotaEntry(ent(ip, s("127.0.0.1")), quotaOp{key: "connection_creation_rate", value: 2.5}), invalid, "Configuration connection_creation_rate must be a INT value"},
		{"scram key as a quota", quotaEntry(ent(user, s("u")), quotaOp{key: "SCRAM-SHA-256", value: 1}), kerr.UnknownServerError.Code, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, validateOnly := range []bool{true, false} {
				resp := alterQuotas(t, ab.cl, validateOnly, tc.entry)
				if len(resp.Entries) != 1 {
					t.Fatalf("entries %+v", resp.Entries)
				}
				got := resp.Entries[0]
				if got.ErrorCode != tc.code || stringOr(got.ErrorMessage) != tc.msg {
					t.Errorf("validate_only=%v: %s %q, want %s %q", validateOnly, errName(got.ErrorCode), stringOr(got.ErrorMessage), errName(tc.code), tc.msg)
				}
			}
		})
	}
	entities, err := ab.b.security.QuotaEntities()
	if err != nil || len(entities) != 0 {
		t.Errorf("bad entries stored quotas: %+v (%v)", entities, err)
	}
}

// Quotas land in Kafka's znodes with Kafka's value texts, beside a user's
// SCRAM credentials, are announced in /config/changes, are in force on the
// broker at once, and emptied quota znodes go away as Kafka's
// tryCleanQuotaNodes removes them.
func TestAlterClientQuotasWrites(t *testing.T) {
	ab := startAdminBroker(t)
	s := kmsg.StringPtr
	user, client := s("user"), s("client-id")
	if err := ab.b.security.AlterUserConfig("alice", func(c map[string]string) error {
		c["SCRAM-SHA-256"] = "salt=x,stored_key=y,server_key=z,iterations=4096"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	resp := alterQuotas(t, ab.cl, false,
		quotaEntry(ent(user, s("alice")), quotaOp{key: "producer_byte_rate", value: 1048576}, quotaOp{key: "request_percentage", value: 50}),
		quotaEntry(ent(user, s("alice"), client, s("app 1")), quotaOp{key: "consumer_byte_rate", value: 2048}),
		quotaEntry(ent(client, nil), quotaOp{key: "producer_byte_rate", value: 4096}),
		quotaEntry(ent(s("ip"), s("127.0.0.1")), quotaOp{key: "connection_creation_rate", value: 10}),
	)
	for _, e := range resp.Entries {
		if e.ErrorCode != 0 {
			t.Fatalf("entry %+v: %s %s", e.Entity, errName(e.ErrorCode), stringOr(e.ErrorMessage))
		}
	}
	want := map[[2]string]map[string]string{
		{"users", "alice"}: {"producer_byte_rate": "1048576", "request_percentage": "50.0",
			"SCRAM-SHA-256": "salt=x,stored_key=y,server_key=z,iterations=4096"},
		{"users", "alice/clients/app%201"}: {"consumer_byte_rate": "2048"},
		{"clients", "<default>"}:           {"producer_byte_rate": "4096"},
		{"ips", "127.0.0.1"}:               {"connection_creation_rate": "10"},
	}
	for k, w := range want {
		got, err := ab.b.security.EntityConfig(k[0], k[1])
		if err != nil || !sameConfigs(got, w) {
			t.Errorf("%s/%s = %v (%v), want %v", k[0], k[1], got, err, w)
		}
	}
	if q, ok := ab.b.quotas.Produce.Quota("alice", "any"); !ok || q != 1048576 {
		t.Errorf("alice's produce quota in force = %v %v", q, ok)
	}
	if q, ok := ab.b.quotas.Fetch.Quota("alice", "app 1"); !ok || q != 2048 {
		t.Errorf("alice/app 1's fetch quota in force = %v %v", q, ok)
	}
	if q, ok := ab.b.quotas.Produce.Quota("bob", "other"); !ok || q != 4096 {
		t.Errorf("the default client's produce quota for bob = %v %v", q, ok)
	}

	// The notifications name the entities as Kafka's AdminZkClient does.
	zk := ab.b.store.Connect()
	defer zk.Close()
	names, _, err := zk.Children(kafkazk.ConfigChangesPath)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range names {
		data, _, err := zk.Get(kafkazk.ConfigChangesPath + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := kafkazk.DecodeConfigChange(data)
		paths = append(paths, p)
	}
	joined := strings.Join(paths, " ")
	for _, p := range []string{"users/alice", "users/alice/clients/app%201", "clients/<default>", "ips/127.0.0.1"} {
		if !strings.Contains(joined, p) {
			t.Errorf("notifications %v lack %s", paths, p)
		}
	}

	// Removing the last quota of alice/app 1 deletes its znode and the
	// clients node; alice keeps her credentials and her node.
	resp = alterQuotas(t, ab.cl, false,
		quotaEntry(ent(user, s("alice"), client, s("app 1")), quotaOp{key: "consumer_byte_rate", remove: true}),
		quotaEntry(ent(user, s("alice")), quotaOp{key: "producer_byte_rate", remove: true}, quotaOp{key: "request_percentage", remove: true}),
		quotaEntry(ent(client, nil), quotaOp{key: "producer_byte_rate", remove: true}))
	for _, e := range resp.Entries {
		if e.ErrorCode != 0 {
			t.Fatalf("removal %+v: %s", e.Entity, errName(e.ErrorCode))
		}
	}
	for _, p := range []string{"/config/users/alice/clients", "/config/clients/<default>"} {
		if ok, _, err := zk.Exists(p); err != nil || ok {
			t.Errorf("%s still exists (%v)", p, err)
		}
	}
	got, err := ab.b.security.EntityConfig("users", "alice")
	if err != nil || !sameConfigs(got, map[string]string{"SCRAM-SHA-256": "salt=x,stored_key=y,server_key=z,iterations=4096"}) {
		t.Errorf("alice after removal = %v (%v)", got, err)
	}
	if _, ok := ab.b.quotas.Produce.Quota("alice", "any"); ok {
		t.Error("alice's produce quota still in force")
	}
	// validate_only writes nothing.
	alterQuotas(t, ab.cl, true, quotaEntry(ent(client, s("v")), quotaOp{key: "producer_byte_rate", value: 1}))
	if ok, _, _ := zk.Exists("/config/clients/v"); ok {
		t.Error("validate_only wrote /config/clients/v")
	}
}

func sameConfigs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A producer over its quota gets the throttle time in the response at
// once, and its connection's next request waits for the throttle.
func TestProduceThrottled(t *testing.T) {
	ab := startAdminBroker(t)
	s := kmsg.StringPtr
	resp := alterQuotas(t, ab.cl, false, quotaEntry(ent(s("client-id"), s("slow")), quotaOp{key: "producer_byte_rate", value: 1024}))
	if resp.Entries[0].ErrorCode != 0 {
		t.Fatalf("alter: %s", errName(resp.Entries[0].ErrorCode))
	}
	ab.createTopic(t, "throttled", 1, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(ab.addr), kgo.ClientID("slow"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bt, err := logstore.EncodeBatch(plainOpts(), []logstore.Record{{Value: make([]byte, 64<<10), Timestamp: time.Now().UnixMilli()}})
	if err != nil {
		t.Fatal(err)
	}
	var throttled time.Duration
	for i := 0; i < 3 && throttled == 0; i++ {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = 1, 5000
		tp := kmsg.NewProduceRequestTopic()
		tp.Topic = "throttled"
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Records = bt.Raw
		tp.Partitions = append(tp.Partitions, pp)
		req.Topics = append(req.Topics, tp)
		r := request[*kmsg.ProduceResponse](t, cl, req)
		throttled = time.Duration(r.ThrottleMillis) * time.Millisecond
	}
	// 64 KiB against 1 KiB/s over a 10 s window: about 5.4 s.
	if throttled < 3*time.Second {
		t.Fatalf("throttle %v, want several seconds", throttled)
	}
	if st := ab.b.quotas.Produce.Stats(time.Now()); len(st) != 1 || st[0].Tags.ClientID != "slow" || !(st[0].ThrottleMs > 0) {
		t.Errorf("produce sensors %+v", st)
	}
}

// A consumer over its fetch quota gets an empty answer carrying the
// throttle time, without the session its full fetch asked for, and the
// quota sensors show in Strimzi's names.
func TestFetchThrottled(t *testing.T) {
	ab := startAdminBroker(t)
	s := kmsg.StringPtr
	alterQuotas(t, ab.cl, false, quotaEntry(ent(s("client-id"), s("reader")), quotaOp{key: "consumer_byte_rate", value: 1024}))
	ab.createTopic(t, "fetched", 1, nil)
	produce := func(n int) {
		t.Helper()
		bt, err := logstore.EncodeBatch(plainOpts(), []logstore.Record{{Value: make([]byte, n), Timestamp: time.Now().UnixMilli()}})
		if err != nil {
			t.Fatal(err)
		}
		if p := produceRaw(t, ab.cl, "fetched", 0, 1, bt.Raw); p.ErrorCode != 0 {
			t.Fatalf("produce: %s", errName(p.ErrorCode))
		}
	}
	produce(4 << 10)
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.Fetch.Int16(), 12)
	reader := ab.client(t, kgo.ClientID("reader"), kgo.MaxVersions(vs))
	defer reader.Close()
	fetch := func(offset int64) *kmsg.FetchResponse {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(12)
		req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 50<<20, 0
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "fetched"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes, fp.FetchOffset = 1<<20, offset
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		return request[*kmsg.FetchResponse](t, reader, req)
	}
	// 4 KiB over the 10 s window is within 1 KiB/s: data and a session.
	first := fetch(0)
	if len(first.Topics) != 1 || len(first.Topics[0].Partitions[0].RecordBatches) < 4<<10 {
		t.Fatalf("first fetch %+v, want the batch", first.Topics)
	}
	if first.ThrottleMillis != 0 || first.SessionID == 0 {
		t.Errorf("first fetch: throttle %d ms, session %d; want none, with a session", first.ThrottleMillis, first.SessionID)
	}
	// 20 KiB is over it: an empty answer, no new session. (max_bytes is
	// capped at the quota's 10 KiB window, but the first batch read goes
	// whole, KIP-74.)
	produce(16 << 10)
	second := fetch(1)
	if second.ThrottleMillis <= 0 || len(second.Topics) != 0 || second.SessionID != 0 {
		t.Errorf("second fetch: throttle %d ms, %d topics, session %d; want throttled, empty, no session",
			second.ThrottleMillis, len(second.Topics), second.SessionID)
	}
	if n := ab.b.data.sessions.len(); n != 1 {
		t.Errorf("%d fetch sessions cached, want the first fetch's only", n)
	}
	families, err := ab.b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["resource"] == "Fetch" && labels["clientId"] == "reader" && labels["user"] == "" {
				found[f.GetName()] = m.GetGauge().GetValue() > 0
			}
		}
	}
	for _, name := range []string{"kafka_server_quota_byte_rate", "kafka_server_quota_throttle_time"} {
		if !found[name] {
			t.Errorf("no positive %s{resource=Fetch,clientId=reader}: %v", name, found)
		}
	}
}

// A client over its request_percentage gets throttled, at most one
// window (1 s) at a time: the time of any request (here Metadata) counts.
func TestRequestPercentageThrottled(t *testing.T) {
	ab := startAdminBroker(t)
	s := kmsg.StringPtr
	alterQuotas(t, ab.cl, false, quotaEntry(ent(s("client-id"), s("busy")), quotaOp{key: "request_percentage", value: 1e-9}))
	busy := ab.client(t, kgo.ClientID("busy"))
	defer busy.Close()
	var throttle int32
	for i := 0; i < 5 && throttle == 0; i++ {
		throttle = request[*kmsg.MetadataResponse](t, busy, kmsg.NewPtrMetadataRequest()).ThrottleMillis
	}
	if throttle <= 0 || throttle > 1000 {
		t.Errorf("metadata throttle %d ms, want within (0, 1000]", throttle)
	}
	if st := ab.b.quotas.Request.Stats(time.Now()); len(st) != 1 || st[0].Tags.ClientID != "busy" || !(st[0].Rate > 0) {
		t.Errorf("request sensors %+v", st)
	}
}

func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{50: "50.0", 12.5: "12.5", 1e7: "1.0E7", 0.0001: "1.0E-4", 123456.75: "123456.75", 2.5e9: "2.5E9"} {
		if got := javaDouble(v); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", v, got, want)
		}
	}
}
