package protocol

import (
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestMetrics are Kafka's kafka.network:type=RequestMetrics beans,
// named as the JMX exporter rules name them (docs/metrics.md):
// RequestsPerSec{request,version} becomes
// kafka_network_requestmetrics_requests_total, each time histogram
// (TotalTimeMs, ...) kafka_network_requestmetrics_totaltimems{request,
// quantile} and ..._count{request}. Like Kafka's
// RequestChannel.updateRequestMetrics they are updated once the response
// left; a fetch counts under Fetch and under FetchConsumer or
// FetchFollower, a verify-only AddPartitionsToTxn under
// AddPartitionsToTxnVerification alone.
//
// The idle meters of the handler "pool" and the network "processors" are
// here too: both phases run on the connections' goroutines.
type requestMetrics struct {
	start int64 // monotonic ns at creation
	// byName holds one entry per metric name, made on first use.
	byName                   [numRequestNames]atomic.Pointer[requestStats]
	handlerIdle, networkIdle idleMeter

	requests                               *prometheus.Desc
	phase                                  [numPhases]struct{ q, count *prometheus.Desc }
	handlerIdlePct, handlerIdleNs, netIdle *prometheus.Desc
	// The same fractions under the MBean names lowercased whole, as
	// dashboards written from the JMX names query them (docs/metrics.md).
	handlerIdlePlain, netIdlePlain *prometheus.Desc
}

// Metric names beyond the api keys (RequestMetrics' override names).
const (
	nameFetchConsumer = maxCachedKey + 1 + iota
	nameFetchFollower
	nameVerifyPartitionsInTxn
	numRequestNames
)

// maxTrackedVersion bounds the per-version request counters; newer
// versions count under it.
const maxTrackedVersion = 31

// Phases of a request, Kafka's RequestMetrics histograms.
const (
	phaseRequestQueue = iota
	phaseLocal
	phaseRemote
	phaseResponseQueue
	phaseResponseSend
	phaseTotal
	phaseThrottle
	numPhases
)

var phaseNames = [numPhases]struct{ name, help string }{
	{"requestqueuetimems", "Milliseconds a request waited for one of queued.max.requests after it was read (RequestQueueTimeMs)."},
	{"localtimems", "Milliseconds the handler took to produce the response or hand it to a wait (LocalTimeMs)."},
	{"remotetimems", "Milliseconds a request waited in the purgatory: acks=all replication, long-polling fetches, coordinator writes (RemoteTimeMs)."},
	{"responsequeuetimems", "Milliseconds a ready response waited behind earlier responses of its connection (ResponseQueueTimeMs)."},
	{"responsesendtimems", "Milliseconds writing the response to the socket took (ResponseSendTimeMs)."},
	{"totaltimems", "Milliseconds from the request read to its response written (TotalTimeMs)."},
	{"throttletimems", "Milliseconds of throttle the response asked the client for (ThrottleTimeMs)."},
}

type requestStats struct {
	name     string
	versions [maxTrackedVersion + 1]atomic.Uint64
	hists    [numPhases]histogram
}

// requestNames are Kafka's ApiKeys names (the request label), by key.
var requestNames = func() (n [numRequestNames]string) {
	// kmsg spells acronyms in capitals where Kafka's message names do not.
	fix := strings.NewReplacer("ISR", "Isr", "SASL", "Sasl", "ACLs", "Acls", "SCRAM", "Scram", "IDs", "Ids", "ID", "Id")
	for k := range maxCachedKey + 1 {
		if name := kmsg.NameForKey(int16(k)); name != "" {
			n[k] = fix.Replace(name)
		}
	}
	n[nameFetchConsumer] = "FetchConsumer"
	n[nameFetchFollower] = "FetchFollower"
	n[nameVerifyPartitionsInTxn] = "AddPartitionsToTxnVerification"
	return n
}()

func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{
		start: nanotime(),
		requests: prometheus.NewDesc("kafka_network_requestmetrics_requests_total",
			"Requests answered, by API and version (RequestMetrics RequestsPerSec).", []string{"request", "version"}, nil),
		handlerIdlePct: prometheus.NewDesc("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent",
			"Fraction of GOMAXPROCS not spent in request handlers over the last one to two minutes (KafkaRequestHandlerPool RequestHandlerAvgIdlePercent).", nil, nil),
		handlerIdleNs: prometheus.NewDesc("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count",
			"Nanoseconds of handler idle time per GOMAXPROCS since start: the meter's Count; its rate over 1e9 is the idle fraction.", nil, nil),
		netIdle: prometheus.NewDesc("kafka_network_socketserver_networkprocessoravgidle_percent",
			"Fraction of GOMAXPROCS not spent decoding requests and writing responses over the last one to two minutes (SocketServer NetworkProcessorAvgIdlePercent).", nil, nil),
		handlerIdlePlain: prometheus.NewDesc("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
			"kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent under the MBean's name lowercased.", nil, nil),
		netIdlePlain: prometheus.NewDesc("kafka_network_socketserver_networkprocessoravgidlepercent",
			"kafka_network_socketserver_networkprocessoravgidle_percent under the MBean's name lowercased.", nil, nil),
	}
	for i, p := range phaseNames {
		m.phase[i].q = prometheus.NewDesc("kafka_network_requestmetrics_"+p.name, p.help, []string{"request", "quantile"}, nil)
		m.phase[i].count = prometheus.NewDesc("kafka_network_requestmetrics_"+p.name+"_count", p.help, []string{"request"}, nil)
	}
	return m
}

var monoBase = time.Now()

// nanotime is monotonic nanoseconds since the process started.
func nanotime() int64 { return int64(time.Since(monoBase)) }

// reqTimes are a request's phase boundaries (nanotime): read, handed to
// the handler, handler returned, response ready (after any Wait),
// response write started.
type reqTimes struct {
	received, decoded, dequeued, localDone, ready, sendStart int64
}

func (m *requestMetrics) stats(i int) *requestStats {
	s := m.byName[i].Load()
	if s == nil {
		// Racing first requests may both make one; one wins for good.
		m.byName[i].CompareAndSwap(nil, &requestStats{name: requestNames[i]})
		s = m.byName[i].Load()
	}
	return s
}

// record books a request whose response was written at end.
func (m *requestMetrics) record(req *Request, resp *Response, end int64) {
	if m == nil || req.Body == nil || req.Key < 0 || int(req.Key) > maxCachedKey {
		return
	}
	t := &req.times
	if t.ready == 0 {
		t.ready = t.localDone
	}
	if t.sendStart == 0 {
		t.sendStart = t.ready
	}
	var durs [numPhases]int64
	durs[phaseRequestQueue] = t.dequeued - t.received
	durs[phaseLocal] = t.localDone - t.dequeued
	durs[phaseRemote] = t.ready - t.localDone
	durs[phaseResponseQueue] = t.sendStart - t.ready
	durs[phaseResponseSend] = end - t.sendStart
	durs[phaseTotal] = end - t.received
	throttle := resp.throttleMs()
	m.networkIdle.add(t.decoded - t.received + durs[phaseResponseSend])

	names := [2]int{int(req.Key), -1}
	switch r := req.Body.(type) {
	case *kmsg.FetchRequest:
		id := r.ReplicaID
		if req.Version >= 15 {
			id = r.ReplicaState.ID
		}
		names[1] = nameFetchConsumer
		if id >= 0 {
			names[1] = nameFetchFollower
		}
	case *kmsg.AddPartitionsToTxnRequest:
		if verifyOnly(req.Version, r) {
			names[0] = nameVerifyPartitionsInTxn
		}
	}
	v := min(max(int(req.Version), 0), maxTrackedVersion)
	for _, n := range names {
		if n < 0 {
			continue
		}
		s := m.stats(n)
		s.versions[v].Add(1)
		for p := range phaseThrottle {
			s.hists[p].record(durs[p])
		}
		s.hists[phaseThrottle].recordMs(throttle)
	}
}

// verifyOnly is Kafka's AddPartitionsToTxnRequest.allVerifyOnlyRequest.
func verifyOnly(version int16, r *kmsg.AddPartitionsToTxnRequest) bool {
	if version < 4 || len(r.Transactions) == 0 {
		return false
	}
	for _, t := range r.Transactions {
		if !t.VerifyOnly {
			return false
		}
	}
	return true
}

// throttleMs is the throttle the response carries: ThrottleMs when set,
// else the kmsg message's throttle field.
func (r *Response) throttleMs() int32 {
	if r.ThrottleMs != 0 {
		return r.ThrottleMs
	}
	if tr, ok := r.Msg.(kmsg.ThrottleResponse); ok {
		ms, _ := tr.Throttle()
		return ms
	}
	return 0
}

// handled books a handler's run (its local time) to the handler idle meter.
func (m *requestMetrics) handled(ns int64) {
	if m != nil {
		m.handlerIdle.add(ns)
	}
}

func (m *requestMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.requests
	for _, p := range m.phase {
		ch <- p.q
		ch <- p.count
	}
	ch <- m.handlerIdlePct
	ch <- m.handlerIdleNs
	ch <- m.netIdle
	ch <- m.handlerIdlePlain
	ch <- m.netIdlePlain
}

func (m *requestMetrics) Collect(ch chan<- prometheus.Metric) {
	now := nanotime()
	procs := runtime.GOMAXPROCS(0)
	for i := range m.byName {
		s := m.byName[i].Load()
		if s == nil {
			continue
		}
		for v := range s.versions {
			if n := s.versions[v].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(m.requests, prometheus.CounterValue, float64(n), s.name, strconv.Itoa(v))
			}
		}
		for p := range s.hists {
			h := &s.hists[p]
			total, recent := h.win.observe(h.snapshot(now), recentWindow)
			for _, q := range histQuantiles {
				ch <- prometheus.MustNewConstMetric(m.phase[p].q, prometheus.GaugeValue, quantile(recent, q.q), s.name, q.label)
			}
			ch <- prometheus.MustNewConstMetric(m.phase[p].count, prometheus.CounterValue, float64(total), s.name)
		}
	}
	frac, idleNs := m.handlerIdle.observe(m.start, now, procs, recentWindow)
	ch <- prometheus.MustNewConstMetric(m.handlerIdlePct, prometheus.GaugeValue, frac)
	ch <- prometheus.MustNewConstMetric(m.handlerIdlePlain, prometheus.GaugeValue, frac)
	ch <- prometheus.MustNewConstMetric(m.handlerIdleNs, prometheus.CounterValue, idleNs)
	frac, _ = m.networkIdle.observe(m.start, now, procs, recentWindow)
	ch <- prometheus.MustNewConstMetric(m.netIdle, prometheus.GaugeValue, frac)
	ch <- prometheus.MustNewConstMetric(m.netIdlePlain, prometheus.GaugeValue, frac)
}
