package quota

import (
	"math"
	"testing"
	"time"
)

// The cases follow Kafka 3.9's ClientQuotaManagerTest.

var t0 = time.UnixMilli(1_700_000_000_000)

func checkQuota(t *testing.T, m *Manager, now time.Time, user, client string, bound float64, value int, throttled bool) {
	t.Helper()
	q, ok := m.Quota(user, client)
	if !ok {
		q = math.MaxInt64
	}
	if q != bound {
		t.Errorf("quota(%s, %s) = %v, want %v", user, client, q, bound)
	}
	wantMax := math.MaxFloat64
	if bound < math.MaxInt64 {
		wantMax = bound * float64(m.cfg.Samples-1) * m.cfg.Window.Seconds()
	}
	if got := m.MaxValueInQuotaWindow(user, client); got != wantMax {
		t.Errorf("MaxValueInQuotaWindow(%s, %s) = %v, want %v", user, client, got, wantMax)
	}
	d := m.Record(user, client, float64(value*m.cfg.Samples), now)
	if throttled && d <= 0 {
		t.Errorf("%s/%s recording %d: not throttled, want throttled", user, client, value)
	}
	if !throttled && d != 0 {
		t.Errorf("%s/%s recording %d: throttled %v, want none", user, client, value, d)
	}
}

func TestQuotaConfigPrecedence(t *testing.T) {
	m := NewManager(Produce, DefaultConfig())
	u, c := Named, Named
	d := DefaultPart
	m.Update(Entity{User: d}, 1000, true)
	m.Update(Entity{ClientID: d}, 2000, true)
	m.Update(Entity{d, d}, 3000, true)
	m.Update(Entity{User: u("userA")}, 4000, true)
	m.Update(Entity{u("userA"), c("client1")}, 5000, true)
	m.Update(Entity{User: u("userB")}, 6000, true)
	m.Update(Entity{u("userB"), c("client1")}, 7000, true)
	m.Update(Entity{u("userB"), d}, 8000, true)
	m.Update(Entity{User: u("userC")}, 10000, true)
	m.Update(Entity{ClientID: c("client1")}, 9000, true)
	now := t0
	check := func(user, client string, bound float64, value int, throttled bool) {
		t.Helper()
		checkQuota(t, m, now, user, client, bound, value, throttled)
	}

	check("userA", "client1", 5000, 4500, false) // <user, client> over <user>
	check("userA", "client2", 4000, 4500, true)  // <user> over <client> and defaults
	check("userA", "client3", 4000, 0, true)     // <user> is shared across the user's clients
	check("userA", "client1", 5000, 0, false)    // <user, client> is exclusive

	check("userB", "client1", 7000, 8000, true)
	check("userB", "client2", 8000, 7000, false) // default per-client quota of the user, exclusive
	check("userB", "client3", 8000, 7000, false)

	check("userD", "client1", 3000, 3500, true) // default <user, client>
	check("userD", "client2", 3000, 2500, false)
	check("userE", "client1", 3000, 2500, false)

	// Without the default <user, client>, the default <user> applies.
	m.Update(Entity{d, d}, 0, false)
	check("userD", "client1", 1000, 0, false) // the metric tags changed: a fresh sensor
	check("userE", "client4", 1000, 1500, true)
	check("userF", "client4", 1000, 800, false) // default <user> shared across the user's clients
	check("userF", "client5", 1000, 800, true)

	// Without the default <user>, the default <client-id> applies.
	m.Update(Entity{User: d}, 0, false)
	check("userF", "client4", 2000, 0, false) // default <client-id> shared across all users' clients of that id
	check("userF", "client5", 2000, 0, false)
	check("userF", "client5", 2000, 2500, true)
	check("userG", "client5", 2000, 0, true)

	m.Update(Entity{User: u("userA")}, 8000, true)
	m.Update(Entity{u("userA"), c("client1")}, 10000, true)
	check("userA", "client2", 8000, 0, false)
	check("userA", "client2", 8000, 4500, true) // the new value adds to the earlier ones
	check("userA", "client1", 10000, 0, false)
	check("userA", "client1", 10000, 6000, true)
	m.Update(Entity{u("userA"), c("client1")}, 0, false)
	check("userA", "client6", 8000, 0, true) // the shared user quota
	m.Update(Entity{u("userA"), c("client6")}, 11000, true)
	check("userA", "client6", 11000, 8500, false)
	m.Update(Entity{u("userA"), d}, 12000, true)
	m.Update(Entity{u("userA"), c("client6")}, 0, false)
	check("userA", "client6", 12000, 4000, true)
}

// TestQuotaParsing is testQuotaParsing for each single level, and the
// level a client falls back to.
func TestQuotaParsing(t *testing.T) {
	for _, tc := range []struct {
		name              string
		client1, client2  Entity
		random, defaulted [2]string
	}{
		{"client-id", Entity{ClientID: Named("p1")}, Entity{ClientID: Named("p2")}, [2]string{"u", "random"}, [2]string{"u", "random"}},
		{"user", Entity{User: Named("User1")}, Entity{User: Named("User2")}, [2]string{"RandomUser", "c"}, [2]string{"RandomUser", "c"}},
		{"user-client", Entity{Named("User1"), Named("p1")}, Entity{Named("User2"), Named("p2")}, [2]string{"RandomUser", "RandomClient"}, [2]string{"RandomUser", "RandomClient"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(Produce, DefaultConfig())
			def := Entity{}
			if tc.client1.User.Set {
				def.User = DefaultPart
			}
			if tc.client1.ClientID.Set {
				def.ClientID = DefaultPart
			}
			m.Update(def, 500, true)
			m.Update(tc.client1, 2000, true)
			m.Update(tc.client2, 4000, true)
			name := func(e Entity) (string, string) {
				user, client := "u", "c"
				if e.User.Set {
					user = e.User.Name
				}
				if e.ClientID.Set {
					client = e.ClientID.Name
				}
				return user, client
			}
			u1, c1 := name(tc.client1)
			u2, c2 := name(tc.client2)
			for _, w := range []struct {
				user, client string
				want         float64
			}{{u1, c1, 2000}, {u2, c2, 4000}, {tc.random[0], tc.random[1], 500}} {
				if q, _ := m.Quota(w.user, w.client); q != w.want {
					t.Errorf("quota(%s, %s) = %v, want %v", w.user, w.client, q, w.want)
				}
			}
			// 2500 per second over the window is over 2000: throttled.
			if d := m.Record(u1, c1, 2500*11, t0); d <= 0 {
				t.Errorf("not throttled at 2500/s against 2000/s")
			}
			// Raising the quota puts it in force on the same sensor.
			m.Update(tc.client1, 3000, true)
			if d := m.Record(u1, c1, 0, t0); d != 0 {
				t.Errorf("throttled %v after raising the quota to 3000/s", d)
			}
			m.Update(tc.client1, 1000, true)
			if d := m.Record(u1, c1, 0, t0); d <= 0 {
				t.Errorf("not throttled after lowering the quota to 1000/s")
			}
		})
	}
}

func TestQuotaViolation(t *testing.T) {
	m := NewManager(Produce, DefaultConfig())
	m.Update(Entity{ClientID: DefaultPart}, 500, true)
	now := t0
	for i := 0; i < 10; i++ {
		if d := m.Record("ANONYMOUS", "unknown", 400, now); d != 0 {
			t.Fatalf("throttled %v under the quota", d)
		}
		now = now.Add(time.Second)
	}
	// 400*10 + 2000 + 300 = 6300 over 10.5 s = 600 bytes/s:
	// (600-500)/500 * 10.5 s = 2100 ms.
	now = now.Add(500 * time.Millisecond)
	d := m.Record("ANONYMOUS", "unknown", 2300, now)
	if d != 2100*time.Millisecond {
		t.Fatalf("throttle = %v, want 2.1s", d)
	}
	m.Throttled("ANONYMOUS", "unknown", d, now)
	st := m.Stats(now)
	if len(st) != 1 || st[0].Tags != (Tags{ClientID: "unknown"}) || st[0].ThrottleMs != 2100 || math.Abs(st[0].Rate-600) > 1e-9 {
		t.Errorf("stats = %+v, want one sensor client-id=unknown at 600 B/s with throttle-time 2100", st)
	}
	now = now.Add(d)
	for i := 0; i < 10; i++ {
		m.Record("ANONYMOUS", "unknown", 400, now)
		now = now.Add(time.Second)
	}
	if d := m.Record("ANONYMOUS", "unknown", 0, now); d != 0 {
		t.Errorf("throttled %v once the burst rolled over", d)
	}
	// The throttle time left the samples with the burst.
	if st := m.Stats(now); len(st) != 1 || !math.IsNaN(st[0].ThrottleMs) {
		t.Errorf("stats = %+v, want one sensor without throttle time", st)
	}
}

func TestRequestThrottleCappedAtOneWindow(t *testing.T) {
	m := NewManager(Request, DefaultConfig())
	m.Update(Entity{User: Named("u")}, 1, true)
	// 1000 % of a thread in one recording is far over 1 %.
	if d := m.Record("u", "c", 1000, t0); d != time.Second {
		t.Errorf("request throttle = %v, want the 1 s cap", d)
	}
	p := NewManager(Produce, DefaultConfig())
	p.Update(Entity{User: Named("u")}, 1, true)
	if d := p.Record("u", "c", 1000, t0); d <= time.Second {
		t.Errorf("produce throttle = %v, want it unbounded (> 1 s)", d)
	}
}

func TestNoQuotaNoRecording(t *testing.T) {
	m := NewManager(Fetch, DefaultConfig())
	if m.Enabled() || m.Record("u", "c", 1e12, t0) != 0 || len(m.Stats(t0)) != 0 {
		t.Fatal("a manager without quotas records or throttles")
	}
	if m.MaxValueInQuotaWindow("u", "c") != math.MaxFloat64 {
		t.Error("MaxValueInQuotaWindow without quotas is not MaxFloat64")
	}
	// Another client's quota: this one is unbounded but now measured.
	m.Update(Entity{ClientID: Named("other")}, 10, true)
	if d := m.Record("u", "c", 1e12, t0); d != 0 {
		t.Errorf("throttled %v without a quota of its own", d)
	}
}

func TestUnrecordTakesBack(t *testing.T) {
	m := NewManager(Fetch, DefaultConfig())
	m.Update(Entity{ClientID: Named("c")}, 100, true)
	if d := m.Record("", "c", 5000, t0); d <= 0 {
		t.Fatal("5000 bytes against 100/s not throttled")
	}
	m.RecordNoThrottle("", "c", -5000, t0)
	if d := m.Record("", "c", 100, t0); d != 0 {
		t.Errorf("throttled %v after the throttled fetch was taken back", d)
	}
}

func TestSensorsExpireAfterAnHour(t *testing.T) {
	m := NewManager(Produce, DefaultConfig())
	m.Update(Entity{ClientID: DefaultPart}, 100, true)
	m.Record("", "old", 1, t0)
	later := t0.Add(time.Hour + time.Minute)
	m.Record("", "new", 1, later)
	st := m.Stats(later)
	if len(st) != 1 || st[0].Tags.ClientID != "new" {
		t.Errorf("stats after an hour = %+v, want only client-id new", st)
	}
}

func TestWindowSize(t *testing.T) {
	c := DefaultConfig()
	var r rate
	r.record(c, 1000, 0)
	// A fresh rate counts samples-1 full windows: 10 s.
	if w := r.windowSize(c, 0); w != 10_000 {
		t.Errorf("window = %d, want 10000", w)
	}
	if v := r.measure(c, 0); v != 100 {
		t.Errorf("rate = %v, want 100/s", v)
	}
	// 11 s later the sample has expired (11 windows without an event).
	if v := r.measure(c, 11_000); v != 0 {
		t.Errorf("rate after expiry = %v, want 0", v)
	}
}

func TestSetApply(t *testing.T) {
	s := NewSet(DefaultConfig())
	e := Entity{User: Named("alice")}
	s.Apply(e, map[string]string{ProducerByteRate: "1024", RequestPercentage: "12.5", "SCRAM-SHA-256": "x"})
	if q, ok := s.Produce.Quota("alice", "c"); !ok || q != 1024 {
		t.Errorf("produce quota = %v %v", q, ok)
	}
	if q, ok := s.Request.Quota("alice", "c"); !ok || q != 12.5 {
		t.Errorf("request quota = %v %v", q, ok)
	}
	if _, ok := s.Fetch.Quota("alice", "c"); ok {
		t.Error("fetch quota set without consumer_byte_rate")
	}
	s.Apply(e, map[string]string{ConsumerByteRate: "2048"})
	if _, ok := s.Produce.Quota("alice", "c"); ok {
		t.Error("produce quota kept after its key went")
	}
	if q, ok := s.Fetch.Quota("alice", "c"); !ok || q != 2048 {
		t.Errorf("fetch quota = %v %v", q, ok)
	}
}
