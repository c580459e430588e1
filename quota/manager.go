package quota

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is what a Manager measures (Kafka's QuotaType).
type Kind int

const (
	// Produce is bytes produced per second (producer_byte_rate).
	Produce Kind = iota
	// Fetch is bytes fetched per second by consumers (consumer_byte_rate).
	Fetch
	// Request is the percentage of one request-handling thread's time
	// (request_percentage).
	Request
)

// String is Kafka's QuotaType name, the "type" of the quota metrics.
func (k Kind) String() string {
	switch k {
	case Produce:
		return "Produce"
	case Fetch:
		return "Fetch"
	}
	return "Request"
}

// Config is Kafka's ClientQuotaManagerConfig: quota.window.num samples of
// quota.window.size.seconds each.
type Config struct {
	Samples int
	Window  time.Duration
}

// DefaultConfig is Kafka's: 11 samples of 1 s.
func DefaultConfig() Config { return Config{Samples: 11, Window: time.Second} }

func (c Config) windowMs() int64 { return c.Window.Milliseconds() }

// Part is one component of a quota entity: absent (the zero value), the
// default (<default> in ZooKeeper), or a name. User names are sanitized
// (Kafka's Sanitizer, as in the znode path); client ids are not.
type Part struct {
	Set, Default bool
	Name         string
}

// Named is a named entity part.
func Named(name string) Part { return Part{Set: true, Name: name} }

// DefaultPart is the default entity part.
var DefaultPart = Part{Set: true, Default: true}

// Entity is what a quota is stored for: a user, a client id, or both.
type Entity struct{ User, ClientID Part }

// Tags are a sensor's metric tags, Kafka's quota "user" and "client-id"
// tags: the sanitized user and the client id, either empty when the
// quotas in force do not tell clients apart by it.
type Tags struct{ User, ClientID string }

// Quota types enabled (QuotaTypes); once set, a bit stays set, as in Kafka,
// until the broker restarts.
const (
	clientIDQuotaEnabled     = 1
	userQuotaEnabled         = 2
	userClientIDQuotaEnabled = 4
)

// inactiveSensorExpiry is ClientQuotaManager.InactiveSensorExpirationTimeSeconds.
const inactiveSensorExpiry = time.Hour

// Manager is one ClientQuotaManager.
type Manager struct {
	kind Kind
	cfg  Config
	// maxThrottleMs caps throttle times (the request quota's one window);
	// 0 leaves them unbounded, as Kafka's byte-rate quotas are.
	maxThrottleMs int64
	// enabled is read without the lock on every request: with no quota
	// ever set nothing is recorded (quotasEnabled).
	enabled atomic.Bool

	mu        sync.RWMutex
	types     int
	quotas    map[Entity]float64
	gen       uint64
	sensors   map[Tags]*sensor
	lastSweep int64
}

// sensor is a client's quota sensor and throttle-time sensor.
type sensor struct {
	mu       sync.Mutex
	rate     rate
	throttle sampled
	bound    float64
	gen      uint64
	last     int64
}

// NewManager returns an empty manager of kind.
func NewManager(kind Kind, cfg Config) *Manager {
	m := &Manager{kind: kind, cfg: cfg, quotas: map[Entity]float64{}, sensors: map[Tags]*sensor{}}
	if kind == Request {
		// ClientRequestQuotaManager.maxThrottleTimeMs.
		m.maxThrottleMs = cfg.windowMs()
	}
	return m
}

// Kind is what the manager measures.
func (m *Manager) Kind() Kind { return m.kind }

// Enabled reports whether any quota was ever set for this kind.
func (m *Manager) Enabled() bool { return m.enabled.Load() }

// Update sets the quota of e, or removes it when ok is false
// (ClientQuotaManager.updateQuota). Sensors pick the new bound up at their
// next recording.
func (m *Manager) Update(e Entity, value float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case e.User.Set && e.ClientID.Set:
		m.types |= userClientIDQuotaEnabled
	case e.User.Set:
		m.types |= userQuotaEnabled
	case e.ClientID.Set:
		m.types |= clientIDQuotaEnabled
	}
	if ok {
		m.quotas[e] = value
	} else {
		delete(m.quotas, e)
	}
	m.gen++
	if m.types != 0 {
		m.enabled.Store(true)
	}
}

// Quota is the quota in force for the user (sanitized) and client id, and
// false when none applies.
func (m *Manager) Quota(user, clientID string) (float64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.limit(m.tags(user, clientID))
}

// tags is DefaultQuotaCallback.quotaMetricTags: which of user and client
// id tell this client's sensor apart, given the quota levels in use.
func (m *Manager) tags(user, clientID string) Tags {
	switch m.types {
	case 0, clientIDQuotaEnabled:
		return Tags{ClientID: clientID}
	case userQuotaEnabled:
		return Tags{User: user}
	case userClientIDQuotaEnabled:
		return Tags{User: user, ClientID: clientID}
	}
	u, c := Named(user), Named(clientID)
	for _, l := range []struct {
		e    Entity
		tags Tags
	}{
		{Entity{u, c}, Tags{user, clientID}},                     // 1) /config/users/<user>/clients/<client-id>
		{Entity{u, DefaultPart}, Tags{user, clientID}},           // 2) /config/users/<user>/clients/<default>
		{Entity{User: u}, Tags{User: user}},                      // 3) /config/users/<user>
		{Entity{DefaultPart, c}, Tags{user, clientID}},           // 4) /config/users/<default>/clients/<client-id>
		{Entity{DefaultPart, DefaultPart}, Tags{user, clientID}}, // 5) /config/users/<default>/clients/<default>
		{Entity{User: DefaultPart}, Tags{User: user}},            // 6) /config/users/<default>
	} {
		if _, ok := m.quotas[l.e]; ok {
			return l.tags
		}
	}
	// 7) /config/clients/<client-id>, 8) /config/clients/<default>
	return Tags{ClientID: clientID}
}

// limit is DefaultQuotaCallback.quotaLimit for a sensor's tags.
func (m *Manager) limit(t Tags) (float64, bool) {
	u, c := Named(t.User), Named(t.ClientID)
	var order []Entity
	switch {
	case t.User != "" && t.ClientID != "":
		order = []Entity{{u, c}, {u, DefaultPart}, {DefaultPart, c}, {DefaultPart, DefaultPart}}
	case t.User != "":
		order = []Entity{{User: u}, {User: DefaultPart}}
	case t.ClientID != "":
		order = []Entity{{ClientID: c}, {ClientID: DefaultPart}}
	}
	for _, e := range order {
		if q, ok := m.quotas[e]; ok {
			return q, true
		}
	}
	return 0, false
}

// sensorFor finds or creates the client's sensor and refreshes its bound
// after a quota change (updateQuotaMetricConfigs).
func (m *Manager) sensorFor(user, clientID string, now int64) *sensor {
	m.mu.RLock()
	t := m.tags(user, clientID)
	s := m.sensors[t]
	gen := m.gen
	m.mu.RUnlock()
	if s == nil {
		m.mu.Lock()
		t = m.tags(user, clientID)
		if s = m.sensors[t]; s == nil {
			m.sweep(now)
			s = &sensor{gen: ^uint64(0), last: now}
			m.sensors[t] = s
		}
		gen = m.gen
		m.mu.Unlock()
	}
	s.mu.Lock()
	stale := s.gen != gen
	s.mu.Unlock()
	if stale {
		m.mu.RLock()
		bound, ok := m.limit(t)
		gen = m.gen
		m.mu.RUnlock()
		if !ok {
			// quotaLimit without an override: Long.MAX_VALUE.
			bound = math.MaxInt64
		}
		s.mu.Lock()
		s.bound, s.gen = bound, gen
		s.mu.Unlock()
	}
	return s
}

// sweep drops sensors unused for an hour, at most every 30 s (Kafka's
// Metrics expiry task). Called with m.mu held.
func (m *Manager) sweep(now int64) {
	if now-m.lastSweep < 30_000 {
		return
	}
	m.lastSweep = now
	for t, s := range m.sensors {
		s.mu.Lock()
		idle := now-s.last >= inactiveSensorExpiry.Milliseconds()
		s.mu.Unlock()
		if idle {
			delete(m.sensors, t)
		}
	}
}

// Record adds value for the client at now and returns how long it must be
// throttled for the rate to come back to its quota (recordAndGetThrottleTimeMs);
// 0 while within it or when no quota of this kind was ever set.
func (m *Manager) Record(user, clientID string, value float64, now time.Time) time.Duration {
	if !m.enabled.Load() {
		return 0
	}
	ms := now.UnixMilli()
	s := m.sensorFor(user, clientID, ms)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = ms
	s.rate.record(m.cfg, value, ms)
	observed := s.rate.measure(m.cfg, ms)
	if observed <= s.bound {
		return 0
	}
	// QuotaUtils.throttleTime: O*W/(W+X) = T gives X = (O-T)/T*W, with W
	// the rate's own window.
	t := int64(math.Floor((observed-s.bound)/s.bound*float64(s.rate.windowSize(m.cfg, ms)) + 0.5))
	if m.maxThrottleMs > 0 {
		t = min(t, m.maxThrottleMs)
	}
	if t <= 0 {
		return 0
	}
	return time.Duration(min(t, math.MaxInt32)) * time.Millisecond
}

// RecordNoThrottle adds value without checking the quota; a later
// recording sees it (recordNoThrottle). A negative value takes back an
// earlier recording (unrecordQuotaSensor: a throttled fetch sends no data).
func (m *Manager) RecordNoThrottle(user, clientID string, value float64, now time.Time) {
	if !m.enabled.Load() {
		return
	}
	ms := now.UnixMilli()
	s := m.sensorFor(user, clientID, ms)
	s.mu.Lock()
	s.last = ms
	s.rate.record(m.cfg, value, ms)
	s.mu.Unlock()
}

// Throttled records that the client was throttled for d (the throttle-time
// sensor, ClientQuotaManager.throttle).
func (m *Manager) Throttled(user, clientID string, d time.Duration, now time.Time) {
	if d <= 0 || !m.enabled.Load() {
		return
	}
	ms := now.UnixMilli()
	s := m.sensorFor(user, clientID, ms)
	s.mu.Lock()
	s.last = ms
	s.throttle.record(m.cfg, float64(d.Milliseconds()), ms)
	s.mu.Unlock()
}

// MaxValueInQuotaWindow is the most that can be recorded at once without
// certain throttling, quota * (samples-1) * window seconds; a consumer
// fetch's max bytes is capped by it (getMaxValueInQuotaWindow). MaxFloat64
// without a quota.
func (m *Manager) MaxValueInQuotaWindow(user, clientID string) float64 {
	if !m.enabled.Load() {
		return math.MaxFloat64
	}
	q, ok := m.Quota(user, clientID)
	if !ok {
		return math.MaxFloat64
	}
	return q * float64(m.cfg.Samples-1) * m.cfg.Window.Seconds()
}

// Stat is one sensor's metrics: the measured rate (byte-rate or
// request-time) and the average throttle time in ms, NaN when it was
// not throttled within the samples (Kafka's Avg).
type Stat struct {
	Tags       Tags
	Rate       float64
	ThrottleMs float64
}

// Stats measures every live sensor at now, ordered by tags.
func (m *Manager) Stats(now time.Time) []Stat {
	ms := now.UnixMilli()
	m.mu.Lock()
	m.sweep(ms)
	sensors := make(map[Tags]*sensor, len(m.sensors))
	for t, s := range m.sensors {
		sensors[t] = s
	}
	m.mu.Unlock()
	out := make([]Stat, 0, len(sensors))
	for t, s := range sensors {
		s.mu.Lock()
		st := Stat{Tags: t, Rate: s.rate.measure(m.cfg, ms), ThrottleMs: math.NaN()}
		if v, ok := s.throttle.avg(m.cfg, ms); ok {
			st.ThrottleMs = v
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tags.User != out[j].Tags.User {
			return out[i].Tags.User < out[j].Tags.User
		}
		return out[i].Tags.ClientID < out[j].Tags.ClientID
	})
	return out
}

// Set is the three client quota managers of a broker.
type Set struct{ Produce, Fetch, Request *Manager }

// NewSet returns managers with no quotas.
func NewSet(cfg Config) *Set {
	return &Set{Produce: NewManager(Produce, cfg), Fetch: NewManager(Fetch, cfg), Request: NewManager(Request, cfg)}
}

// Config keys of the quotas each manager enforces (QuotaConfigs).
const (
	ProducerByteRate  = "producer_byte_rate"
	ConsumerByteRate  = "consumer_byte_rate"
	RequestPercentage = "request_percentage"
)

// Apply puts the stored configs of e in force: each quota key present sets
// that quota, each absent one removes it (Kafka's ClientIdConfigHandler and
// UserConfigHandler). Values that are not numbers are skipped, as Kafka's
// handler fails on them; the byte rates are whole numbers there
// (toLong.toDouble).
func (s *Set) Apply(e Entity, configs map[string]string) {
	for _, k := range []struct {
		key      string
		m        *Manager
		integral bool
	}{{ProducerByteRate, s.Produce, true}, {ConsumerByteRate, s.Fetch, true}, {RequestPercentage, s.Request, false}} {
		v, ok := configs[k.key]
		if !ok {
			k.m.Update(e, 0, false)
			continue
		}
		f, err := parseQuota(v, k.integral)
		if err != nil {
			continue
		}
		k.m.Update(e, f, true)
	}
}

func parseQuota(v string, integral bool) (float64, error) {
	if integral {
		n, err := strconv.ParseInt(v, 10, 64)
		return float64(n), err
	}
	return strconv.ParseFloat(v, 64)
}
