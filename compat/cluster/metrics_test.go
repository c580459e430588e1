package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 28: the metrics a Kafka dashboard reads are there under the names
// Prometheus' JMX exporter (Strimzi's rules) gives Kafka's MBeans, with
// sensible values, on a cluster of three that produced and consumed; and
// every query of docs/grafana/kbroker.json returns data from it, run by
// the real PromQL engine over three scrapes of every broker.
func TestMetricsAndDashboard(t *testing.T) {
	const (
		topic   = "metrics"
		records = 300
	)
	metricsAddr := map[int32]string{}
	c := harness.StartClusterPerBroker(t, 3, func(id int32) []string {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
		metricsAddr[id] = addr
		return []string{"metrics.listener=" + addr}
	})
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, 3, 3, minISR2)
	waitFullISR(t, conn, topic, 3, 3)

	// A default client quota far above the load, so that the quota
	// sensors measure the producer and the consumer without throttling
	// them: their series are on the dashboard too.
	setDefaultClientQuotas(t, c.Addrs(), 1e9)
	produced := produceRecords(t, c.Addrs(), topic, records)
	consumeRecords(t, c.Addrs(), topic, produced)

	// The followers' fetches and the counters settle within a few
	// hundred milliseconds; three scrapes two seconds apart give the
	// rates of the dashboard two points.
	db := teststorage.New(t)
	var last map[int32]map[string]*dto.MetricFamily
	var lastAt time.Time
	for i := range 3 {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		lastAt = time.Now()
		last = map[int32]map[string]*dto.MetricFamily{}
		app := db.Appender(context.Background())
		for _, b := range c.Brokers {
			fams := scrape(t, metricsAddr[b.ID])
			last[b.ID] = fams
			appendFamilies(t, app, fams, lastAt, fmt.Sprintf("broker-%d", b.ID))
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("names", func(t *testing.T) { checkMetricNames(t, last) })
	t.Run("values", func(t *testing.T) { checkMetricValues(t, last, topic, produced) })
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, db, lastAt) })
}

// setDefaultClientQuotas sets producer_byte_rate and consumer_byte_rate
// for the default client id and waits until every broker had time to
// read the change notification.
func setDefaultClientQuotas(t *testing.T, seeds []string, rate float64) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, seeds))
	res, err := adm.AlterClientQuotas(testCtx(t, 30*time.Second), []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id"}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: rate}, {Key: "consumer_byte_rate", Value: rate}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("alter client quotas: %v (%s)", r.Err, r.ErrMessage)
		}
	}
	time.Sleep(time.Second)
}

func produceRecords(t *testing.T, seeds []string, topic string, n int) int {
	t.Helper()
	cl := newClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := testCtx(t, 30*time.Second)
	for i := range n {
		r := &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte("value-" + strconv.Itoa(i))}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return n
}

// consumeRecords reads the topic from the start, without a group (so
// that __consumer_offsets takes no records).
func consumeRecords(t *testing.T, seeds []string, topic string, n int) {
	t.Helper()
	cl := newClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t, 30*time.Second)
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", got, n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch: %v", err) })
		got += fs.NumRecords()
	}
}

func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	return fams
}

// appendFamilies stores a scrape as Prometheus would, with instance and
// job labels.
func appendFamilies(t *testing.T, app storage.Appender, fams map[string]*dto.MetricFamily, at time.Time, instance string) {
	t.Helper()
	vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(at.UnixNano())}, mapValues(fams)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range vec {
		b := labels.NewBuilder(labels.EmptyLabels())
		for k, v := range s.Metric {
			b.Set(string(k), string(v))
		}
		b.Set("instance", instance)
		b.Set("job", "kbroker")
		if _, err := app.Append(0, b.Labels(), int64(s.Timestamp), float64(s.Value)); err != nil {
			t.Fatalf("append %v: %v", s.Metric, err)
		}
	}
}

func mapValues(m map[string]*dto.MetricFamily) []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	return out
}

// series are the samples of name whose labels include want; a want value
// of "" means the label is absent.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) []float64 {
	f := fams[name]
	if f == nil {
		return nil
	}
	var out []float64
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			if have[k] != v {
				ok = false
			}
		}
		if !ok {
			continue
		}
		switch {
		case m.Gauge != nil:
			out = append(out, m.Gauge.GetValue())
		case m.Counter != nil:
			out = append(out, m.Counter.GetValue())
		case m.Untyped != nil:
			out = append(out, m.Untyped.GetValue())
		}
	}
	return out
}

func sumOf(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s
}

// everywhere are the names (docs/metrics.md), present on every
// broker with the labels given.
var everywhere = []struct {
	name   string
	labels map[string]string
}{
	{"kafka_server_brokertopicmetrics_messagesin_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_bytesin_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_bytesout_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_bytesrejected_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_failedproducerequests_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_failedfetchrequests_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_totalproducerequests_total", map[string]string{"topic": ""}},
	{"kafka_server_brokertopicmetrics_totalfetchrequests_total", map[string]string{"topic": ""}},
	// Each broker leads one partition of the topic and follows two.
	{"kafka_server_brokertopicmetrics_messagesin_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_bytesin_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_totalproducerequests_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_totalfetchrequests_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_bytesout_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_bytesrejected_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_failedproducerequests_total", map[string]string{"topic": "metrics"}},
	{"kafka_server_brokertopicmetrics_failedfetchrequests_total", map[string]string{"topic": "metrics"}},
	{"kafka_network_requestmetrics_requests_total", map[string]string{"request": "Metadata"}},
	{"kafka_network_requestmetrics_requests_total", map[string]string{"request": "FetchFollower"}},
	{"kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", nil},
	{"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count", nil},
	{"kafka_network_socketserver_networkprocessoravgidle_percent", nil},
	{"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent", nil},
	{"kafka_network_socketserver_networkprocessoravgidlepercent", nil},
	{"kafka_controller_kafkacontroller_activecontrollercount", nil},
	{"kafka_controller_kafkacontroller_offlinepartitionscount", nil},
	{"kafka_controller_kafkacontroller_preferredreplicaimbalancecount", nil},
	{"kafka_controller_kafkacontroller_globalpartitioncount", nil},
	{"kafka_controller_kafkacontroller_globaltopiccount", nil},
	{"kafka_log_log_size", map[string]string{"topic": "metrics", "partition": "0"}},
	{"kafka_log_log_numlogsegments", map[string]string{"topic": "metrics", "partition": "1"}},
	{"kafka_log_log_logstartoffset", map[string]string{"topic": "metrics", "partition": "2"}},
	{"kafka_server_replicafetchermanager_maxlag", map[string]string{"clientId": "Replica"}},
	{"kafka_server_fetcherlagmetrics_consumerlag", map[string]string{"topic": "metrics"}},
	{"kafka_server_replicamanager_underreplicatedpartitions", nil},
}

// requestHistograms are RequestMetrics' time histograms: quantile gauges
// and a _count per request.
var requestHistograms = []string{"requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems",
	"responsesendtimems", "totaltimems", "throttletimems"}

func checkMetricNames(t *testing.T, scraped map[int32]map[string]*dto.MetricFamily) {
	for id, fams := range scraped {
		for _, e := range everywhere {
			if len(series(fams, e.name, e.labels)) == 0 {
				t.Errorf("broker %d: no %s%v", id, e.name, e.labels)
			}
		}
		for _, h := range requestHistograms {
			name := "kafka_network_requestmetrics_" + h
			for _, req := range []string{"Metadata", "Fetch", "FetchFollower"} {
				for _, q := range []string{"0.50", "0.75", "0.95", "0.98", "0.99", "0.999"} {
					if len(series(fams, name, map[string]string{"request": req, "quantile": q})) != 1 {
						t.Errorf("broker %d: no %s{request=%q,quantile=%q}", id, name, req, q)
					}
				}
				if v := series(fams, name+"_count", map[string]string{"request": req}); len(v) != 1 || v[0] <= 0 {
					t.Errorf("broker %d: %s_count{request=%q} = %v", id, name, req, v)
				}
			}
		}
	}
	// The producer and the consumer met at least one leader each.
	all := func(name string, labels map[string]string) (s float64) {
		for _, fams := range scraped {
			s += sumOf(series(fams, name, labels))
		}
		return s
	}
	for _, req := range []string{"Produce", "FetchConsumer"} {
		if all("kafka_network_requestmetrics_requests_total", map[string]string{"request": req}) <= 0 {
			t.Errorf("no %s requests counted", req)
		}
		if all("kafka_network_requestmetrics_totaltimems_count", map[string]string{"request": req}) <= 0 {
			t.Errorf("no %s total time counted", req)
		}
	}
	// The leaders that served the producer and the consumer measured them
	// against the default client quota.
	count := func(name string, labels map[string]string) (n int) {
		for _, fams := range scraped {
			n += len(series(fams, name, labels))
		}
		return n
	}
	for _, resource := range []string{"Produce", "Fetch"} {
		for _, name := range []string{"kafka_server_quota_byte_rate", "kafka_server_quota_throttle_time"} {
			if count(name, map[string]string{"resource": resource}) == 0 {
				t.Errorf("no %s{resource=%q} on any broker", name, resource)
			}
		}
	}
}

func checkMetricValues(t *testing.T, scraped map[int32]map[string]*dto.MetricFamily, topic string, produced int) {
	var messagesIn, bytesOut, totalProduce, totalFetch float64
	active, controller := 0, int32(-1)
	for id, fams := range scraped {
		messagesIn += sumOf(series(fams, "kafka_server_brokertopicmetrics_messagesin_total", map[string]string{"topic": topic}))
		bytesOut += sumOf(series(fams, "kafka_server_brokertopicmetrics_bytesout_total", map[string]string{"topic": topic}))
		totalProduce += sumOf(series(fams, "kafka_server_brokertopicmetrics_totalproducerequests_total", map[string]string{"topic": ""}))
		totalFetch += sumOf(series(fams, "kafka_server_brokertopicmetrics_totalfetchrequests_total", map[string]string{"topic": ""}))
		if v := series(fams, "kafka_controller_kafkacontroller_activecontrollercount", nil); len(v) == 1 && v[0] == 1 {
			active++
			controller = id
		}
		for _, name := range []string{"kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", "kafka_network_socketserver_networkprocessoravgidle_percent",
			"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent", "kafka_network_socketserver_networkprocessoravgidlepercent"} {
			if v := series(fams, name, nil); len(v) != 1 || v[0] < 0 || v[0] > 1 || math.IsNaN(v[0]) {
				t.Errorf("broker %d: %s = %v, want within [0, 1]", id, name, v)
			}
		}
		for p := range 3 {
			lbl := map[string]string{"topic": topic, "partition": strconv.Itoa(p)}
			if v := series(fams, "kafka_log_log_size", lbl); len(v) != 1 || v[0] <= 0 {
				t.Errorf("broker %d: log size of %s-%d = %v", id, topic, p, v)
			}
			if v := series(fams, "kafka_log_log_numlogsegments", lbl); len(v) != 1 || v[0] < 1 {
				t.Errorf("broker %d: segments of %s-%d = %v", id, topic, p, v)
			}
		}
		for _, v := range series(fams, "kafka_server_fetcherlagmetrics_consumerlag", map[string]string{"topic": topic}) {
			if v != 0 {
				t.Errorf("broker %d: follower lag %v on a cluster at rest", id, v)
			}
		}
	}
	// Retries of an idempotent producer count again (as in Kafka); a
	// test this small should see none or a few.
	if messagesIn < float64(produced) || messagesIn > float64(produced)*1.1 {
		t.Errorf("messagesin_total{topic=%q} summed over brokers = %v, produced %d", topic, messagesIn, produced)
	}
	if bytesOut <= 0 || totalProduce <= 0 || totalFetch <= 0 {
		t.Errorf("bytes out %v, produce requests %v, fetch requests %v: want all > 0", bytesOut, totalProduce, totalFetch)
	}
	if active != 1 {
		t.Fatalf("%d brokers report activecontrollercount 1", active)
	}
	fams := scraped[controller]
	if v := series(fams, "kafka_controller_kafkacontroller_globalpartitioncount", nil); len(v) != 1 || v[0] < 3 {
		t.Errorf("controller %d: globalpartitioncount %v", controller, v)
	}
	if v := series(fams, "kafka_controller_kafkacontroller_globaltopiccount", nil); len(v) != 1 || v[0] < 1 {
		t.Errorf("controller %d: globaltopiccount %v", controller, v)
	}
	if v := series(fams, "kafka_controller_kafkacontroller_offlinepartitionscount", nil); len(v) != 1 || v[0] != 0 {
		t.Errorf("controller %d: offlinepartitionscount %v", controller, v)
	}
	for id, fams := range scraped {
		if id == controller {
			continue
		}
		if v := series(fams, "kafka_controller_kafkacontroller_globalpartitioncount", nil); len(v) != 1 || v[0] != 0 {
			t.Errorf("broker %d, not the controller, reports globalpartitioncount %v", id, v)
		}
	}
}

// grafanaDashboard is what the test reads of a dashboard: its panels'
// targets, rows' panels included.
type grafanaDashboard struct {
	Panels []grafanaPanel `json:"panels"`
}

type grafanaPanel struct {
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func checkDashboard(t *testing.T, db *teststorage.TestStorage, at time.Time) {
	raw, err := os.ReadFile("../../docs/grafana/kbroker.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	// Grafana's variables, as it would fill them for a short range.
	vars := strings.NewReplacer("$__rate_interval", "30s", "$__interval", "15s", "$__range", "1m")
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 30 * time.Second})
	n := 0
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, tg := range p.Targets {
				n++
				expr := vars.Replace(tg.Expr)
				q, err := eng.NewInstantQuery(context.Background(), db, nil, expr, at)
				if err != nil {
					t.Errorf("panel %q: %s: %v", p.Title, expr, err)
					continue
				}
				res := q.Exec(context.Background())
				switch {
				case res.Err != nil:
					t.Errorf("panel %q: %s: %v", p.Title, expr, res.Err)
				case res.Value.Type() != "vector":
					t.Errorf("panel %q: %s: a %s, want a vector", p.Title, expr, res.Value.Type())
				default:
					if v, _ := res.Vector(); len(v) == 0 {
						t.Errorf("panel %q: %s returns no series", p.Title, expr)
					}
				}
				q.Close()
			}
		}
	}
	walk(d.Panels)
	if n < 20 {
		t.Fatalf("only %d queries in the dashboard", n)
	}
}
