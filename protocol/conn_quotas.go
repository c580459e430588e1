package protocol

import (
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// rejectReason says why a new connection was closed at once.
type rejectReason string

const (
	rejectMaxConnections rejectReason = "max.connections"
	rejectPerIP          rejectReason = "max.connections.per.ip"
	rejectFileLimit      rejectReason = "file descriptors"
)

// connQuotas is Kafka's ConnectionQuotas: connection counts per ip and in
// all, max.connections, max.connections.per.ip (with overrides) and
// max.connection.creation.rate, plus a file-descriptor budget Kafka does
// not have. Its decisions take the time as an argument; the only IO is
// the descriptor count it samples (fdCount).
type connQuotas struct {
	mu        sync.Mutex
	maxConns  int
	perIP     int
	overrides map[string]int // by ip text
	// interBroker is the listener exempt from max.connections and the
	// creation rate, as in Kafka, and given a reserve of descriptors.
	interBroker string

	total int
	byIP  map[string]int

	// The creation rate is a token bucket holding at most a second's
	// worth of connections.
	rate       float64
	tokens     float64
	lastRefill time.Time

	// fdLimit is RLIMIT_NOFILE; otherFDs the descriptors open besides
	// connections at the last sample.
	fdLimit    int
	otherFDs   int
	sampledAt  time.Time
	fdCount    func() int
	fdInterval time.Duration
}

// fdReserve keeps descriptors free for what the broker itself must open
// (segment files, ZooKeeper, replica fetchers, the inter-broker listener)
// when client connections would take them all.
func fdReserve(limit int) int { return max(64, limit/10) }

func newConnQuotas(cfg ServerConfig) *connQuotas {
	q := &connQuotas{
		maxConns:    cfg.MaxConnections,
		perIP:       cfg.MaxConnectionsPerIP,
		overrides:   resolveOverrides(cfg.MaxConnectionsPerIPOverrides),
		interBroker: cfg.InterBrokerListener,
		byIP:        map[string]int{},
		rate:        float64(cfg.MaxConnectionCreationRate),
		tokens:      float64(cfg.MaxConnectionCreationRate),
		fdLimit:     fileLimit(),
		fdCount:     openFiles,
		fdInterval:  time.Second,
	}
	return q
}

// reconfigure puts new limits into force (dynamic broker configs,
// SocketServer.reconfigure in Kafka). Connections already open stay, even
// above a lowered limit, as in Kafka; new ones are judged by the new
// limits.
func (q *connQuotas) reconfigure(cfg ServerConfig) {
	cfg = cfg.withDefaults()
	overrides := resolveOverrides(cfg.MaxConnectionsPerIPOverrides)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.maxConns, q.perIP, q.overrides = cfg.MaxConnections, cfg.MaxConnectionsPerIP, overrides
	if rate := float64(cfg.MaxConnectionCreationRate); rate != q.rate {
		q.rate, q.tokens = rate, min(q.tokens, rate)
	}
}

// resolveOverrides turns max.connections.per.ip.overrides hosts into ips,
// as Kafka does once with InetAddress.getByName.
func resolveOverrides(in map[string]int) map[string]int {
	out := map[string]int{}
	for host, n := range in {
		if ip := net.ParseIP(host); ip != nil {
			out[ip.String()] = n
			continue
		}
		addrs, err := net.LookupHost(host)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil {
				out[ip.String()] = n
			}
		}
	}
	return out
}

// throttle returns how long the acceptor must wait before admitting one
// more connection on listener, and takes a token when it need not.
func (q *connQuotas) throttle(listener string, now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.rate <= 0 || listener == q.interBroker || q.rate >= maxInt32 {
		return 0
	}
	if !q.lastRefill.IsZero() {
		q.tokens = min(q.rate, q.tokens+now.Sub(q.lastRefill).Seconds()*q.rate)
	}
	q.lastRefill = now
	if q.tokens >= 1 {
		q.tokens--
		return 0
	}
	return time.Duration((1 - q.tokens) / q.rate * float64(time.Second))
}

const maxInt32 = 1<<31 - 1

// admit counts a new connection, or refuses it with the reason.
func (q *connQuotas) admit(listener, ip string, now time.Time) (rejectReason, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fdLimit > 0 && (q.sampledAt.IsZero() || now.Sub(q.sampledAt) >= q.fdInterval) {
		q.otherFDs = max(q.fdCount()-q.total, 0)
		q.sampledAt = now
	}
	interBroker := listener == q.interBroker
	if q.fdLimit > 0 {
		reserve := fdReserve(q.fdLimit)
		if interBroker {
			reserve /= 4
		}
		if q.total+q.otherFDs+reserve >= q.fdLimit {
			return rejectFileLimit, false
		}
	}
	if !interBroker && q.total >= q.maxConns {
		return rejectMaxConnections, false
	}
	limit, ok := q.overrides[ip]
	if !ok {
		limit = q.perIP
	}
	if q.byIP[ip] >= limit {
		return rejectPerIP, false
	}
	q.total++
	q.byIP[ip]++
	return "", true
}

func (q *connQuotas) release(ip string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.total--
	if q.byIP[ip]--; q.byIP[ip] <= 0 {
		delete(q.byIP, ip)
	}
}

// fileLimit is the soft RLIMIT_NOFILE (the Go runtime raises it to the
// hard limit at start-up), or 0 when it cannot be read.
func fileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}

// openFiles counts this process's open descriptors.
func openFiles() int {
	f, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return len(names)
}

// ipOf is the text of addr's ip, the key of the per-ip counts.
func ipOf(addr net.Addr) string {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}
