package server

// Client quotas (KIP-13, KIP-124, KIP-219) on the request path, as Kafka
// 3.9's KafkaApis and RequestHandlerHelper apply them: after a request is
// handled, the bytes it produced (its size, Produce) and the time its
// handler took (every API but the cluster actions) are recorded against
// the client's quotas; a client over one gets the larger throttle time in
// the response's throttle_time_ms, the response leaves at once, and the
// connection is not read again before the throttle ends
// (protocol.Response.Throttle). Fetch applies its quotas itself before it
// builds its answer (fetch_quota.go). docs/quotas.md has the detail.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/quota"
	"github.com/kbroker/kbroker/zkbroker"
)

func newQuotas(cfg *config.Config) *quota.Set {
	qc := quota.DefaultConfig()
	if cfg.QuotaWindowNum > 0 {
		qc.Samples = int(cfg.QuotaWindowNum)
	}
	if cfg.QuotaWindowSizeSeconds > 0 {
		qc.Window = time.Duration(cfg.QuotaWindowSizeSeconds) * time.Second
	}
	return quota.NewSet(qc)
}

// clusterAction reports the requests brokers and controllers send each
// other (ApiKeys with clusterAction): exempt from the request quota.
func clusterAction(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.LeaderAndISR, kmsg.StopReplica, kmsg.UpdateMetadata, kmsg.ControlledShutdown,
		kmsg.WriteTxnMarkers, kmsg.AlterPartition, kmsg.AllocateProducerIDs:
		return true
	}
	return false
}

// quotaClient is who a request counts against: the sanitized user of the
// connection's principal (ANONYMOUS before or without authentication) and
// the request's client id.
func quotaClient(req *protocol.Request) (user, clientID string) {
	p := protocol.Anonymous
	if req.Conn != nil {
		p = req.Conn.Principal()
	}
	if _, name, ok := strings.Cut(p, ":"); ok {
		p = name
	}
	if req.ClientID != nil {
		clientID = *req.ClientID
	}
	return kafkazk.Sanitize(p), clientID
}

// requestPercentage turns handler time into the request quota's unit: a
// percentage of one thread over a second (NanosToPercentagePerSecond).
func requestPercentage(d time.Duration) float64 { return float64(d.Nanoseconds()) * 100 / 1e9 }

// quotaExempt is a request no client quota applies to: the broker's own,
// and cluster actions.
func quotaExempt(req *protocol.Request) bool {
	return req.Conn == nil || req.Conn.Internal || clusterAction(req.Key)
}

// handleWithQuotas runs the handler and applies the produce and request
// quotas to what it did.
func (b *Broker) handleWithQuotas(a api, ctx context.Context, req *protocol.Request) protocol.Response {
	// With no quota ever set this costs two atomic loads per request.
	produce := req.Key == kmsg.Produce.Int16()
	if (!b.quotas.Request.Enabled() && !(produce && b.quotas.Produce.Enabled())) ||
		req.Key == kmsg.Fetch.Int16() || quotaExempt(req) {
		return a.handle(b, ctx, req)
	}
	start := time.Now()
	resp := a.handle(b, ctx, req)
	now := time.Now()
	user, client := quotaClient(req)
	var bytesThrottle, requestThrottle time.Duration
	if produce {
		bytesThrottle = b.quotas.Produce.Record(user, client, float64(req.Size), now)
	}
	// Kafka exempts acks=0 produces from the request quota: they have
	// no response to carry the throttle time.
	if !produce || req.Body.(*kmsg.ProduceRequest).Acks != 0 {
		requestThrottle = b.quotas.Request.Record(user, client, requestPercentage(now.Sub(start)), now)
	}
	d := max(bytesThrottle, requestThrottle)
	if d <= 0 {
		return resp
	}
	if bytesThrottle > requestThrottle {
		b.quotas.Produce.Throttled(user, client, d, now)
	} else {
		b.quotas.Request.Throttled(user, client, d, now)
	}
	return withThrottle(resp, d)
}

// withThrottle puts d into the response's throttle_time_ms and mutes the
// connection for it once the response is ready; a Wait's final response
// carries it.
func withThrottle(resp protocol.Response, d time.Duration) protocol.Response {
	if resp.Wait != nil {
		wait := resp.Wait
		resp.Wait = func(ctx context.Context) protocol.Response { return withThrottle(wait(ctx), d) }
		return resp
	}
	if t, ok := resp.Msg.(kmsg.SetThrottleResponse); ok {
		t.SetThrottle(int32(min(d.Milliseconds(), 1<<31-1)))
	}
	resp.Throttle = d
	return resp
}

// quotaEntityOf turns a quota znode (root type and sanitized name) into
// the engine's entity; IP entities have no client quotas here.
func quotaEntityOf(root, name string) (quota.Entity, bool) {
	part := func(n string, desanitize bool) quota.Part {
		if n == kafkazk.QuotaDefaultName {
			return quota.DefaultPart
		}
		if desanitize {
			if d, err := kafkazk.Desanitize(n); err == nil {
				n = d
			}
		}
		return quota.Named(n)
	}
	switch root {
	case kafkazk.ConfigTypeClient:
		return quota.Entity{ClientID: part(name, true)}, true
	case kafkazk.ConfigTypeUser:
		// Users stay sanitized: sensors are keyed by the sanitized user.
		user, client, ok := strings.Cut(name, "/"+kafkazk.ConfigTypeClient+"/")
		if ok {
			return quota.Entity{User: part(user, false), ClientID: part(client, true)}, true
		}
		return quota.Entity{User: part(name, false)}, true
	}
	return quota.Entity{}, false
}

// quotaEntityChanged puts an entity's stored configs in force.
func (b *Broker) quotaEntityChanged(root, name string, configs map[string]string) {
	if e, ok := quotaEntityOf(root, name); ok {
		b.quotas.Apply(e, configs)
	}
}

// reloadQuotaEntity re-reads an entity named by a change notification.
func (b *Broker) reloadQuotaEntity(root, name string) {
	if _, ok := quotaEntityOf(root, name); !ok || b.security == nil {
		return
	}
	configs, err := b.security.EntityConfig(root, name)
	if err != nil {
		b.logger.Warn("cannot read changed client quotas; keeping the old ones", "entity", root+"/"+name, "err", err)
		return
	}
	b.quotaEntityChanged(root, name, configs)
	b.logger.Info("client quotas changed", "entity", root+"/"+name)
}

// quotaWatcher is zkbroker.Node's quota side.
type quotaWatcher interface {
	QuotaEntities() ([]kafkazk.QuotaEntity, error)
	WatchQuotaConfigChanges(ctx context.Context, fn func(root, name string))
}

var _ quotaWatcher = (*zkbroker.Node)(nil)

// loadQuotas puts every stored quota in force before the broker serves
// (Kafka's DynamicConfigManager reads the configs at startup), retrying
// while the metadata store is not reachable yet.
func (b *Broker) loadQuotas(stop context.Context, w quotaWatcher, nodeFailed <-chan struct{}) {
	b.loadBeforeServing(stop, nodeFailed, "client quotas", func() error {
		entities, err := w.QuotaEntities()
		if err != nil {
			return err
		}
		for _, e := range entities {
			b.applyStoredQuotas(e)
		}
		b.logger.Info("client quotas loaded", "entities", len(entities))
		return nil
	})
}

// runQuotaConfigChanges follows the change notifications until ctx ends;
// Run starts it once the stored quotas are loaded.
func (b *Broker) runQuotaConfigChanges(ctx context.Context, w quotaWatcher) {
	w.WatchQuotaConfigChanges(ctx, b.reloadQuotaEntity)
}

func (b *Broker) applyStoredQuotas(e kafkazk.QuotaEntity) {
	var ent quota.Entity
	for typ, name := range e.Names {
		p := quota.DefaultPart
		switch {
		case typ == "ip":
			return
		case name != nil && typ == "user":
			p = quota.Named(kafkazk.Sanitize(*name))
		case name != nil:
			p = quota.Named(*name)
		}
		if typ == "user" {
			ent.User = p
		} else {
			ent.ClientID = p
		}
	}
	configs := map[string]string{}
	for k, v := range e.Quotas {
		configs[k] = formatStoredQuota(k, v)
	}
	b.quotas.Apply(ent, configs)
}

// formatStoredQuota gives back the text of a quota read as a number:
// byte rates are whole.
func formatStoredQuota(key string, v float64) string {
	if key == quota.RequestPercentage {
		return javaDouble(v)
	}
	return strconv.FormatInt(int64(v), 10)
}

// quotaMetrics exports the client quota sensors as Strimzi's JMX exporter
// rules name Kafka's kafka.server:type=Produce|Fetch|Request,user=,client-id=
// beans: kafka_server_quota_<attribute>{resource,user,clientId}, the tag
// Kafka leaves empty (and out of the bean name) empty here.
type quotaMetrics struct {
	b                                *Broker
	byteRate, requestTime, throttled *prometheus.Desc
}

func newQuotaMetrics(b *Broker) *quotaMetrics {
	labels := []string{"resource", "user", "clientId"}
	return &quotaMetrics{
		b:           b,
		byteRate:    prometheus.NewDesc("kafka_server_quota_byte_rate", "Bytes per second produced or fetched per user/client-id (Produce/Fetch byte-rate).", labels, nil),
		requestTime: prometheus.NewDesc("kafka_server_quota_request_time", "Percentage of a request thread used per user/client-id (Request request-time).", labels, nil),
		throttled:   prometheus.NewDesc("kafka_server_quota_throttle_time", "Average throttle time in ms per user/client-id (throttle-time; NaN when not throttled within the quota window).", labels, nil),
	}
}

func (m *quotaMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.byteRate
	ch <- m.requestTime
	ch <- m.throttled
}

func (m *quotaMetrics) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, mgr := range []*quota.Manager{m.b.quotas.Produce, m.b.quotas.Fetch, m.b.quotas.Request} {
		rate := m.byteRate
		if mgr.Kind() == quota.Request {
			rate = m.requestTime
		}
		for _, s := range mgr.Stats(now) {
			lv := []string{mgr.Kind().String(), s.Tags.User, s.Tags.ClientID}
			ch <- prometheus.MustNewConstMetric(rate, prometheus.GaugeValue, s.Rate, lv...)
			ch <- prometheus.MustNewConstMetric(m.throttled, prometheus.GaugeValue, s.ThrottleMs, lv...)
		}
	}
}
