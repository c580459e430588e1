// Package quota is Kafka's client quota engine (KIP-13, KIP-124, KIP-219)
// without IO or a clock of its own: every call takes the time.
//
// A Manager is one of Kafka's ClientQuotaManagers (produce bytes, fetch
// bytes, request time). It keeps the quota overrides that the metadata
// store holds for users, client ids and user/client-id pairs (with their
// defaults), resolves the quota of a connection with Kafka's 8-level
// precedence, and measures what each client uses with Kafka's Rate over a
// SampledStat (quota.window.num samples of quota.window.size.seconds). A
// recording that takes the rate over the quota returns the throttle time
// Kafka's QuotaUtils.throttleTime computes: (observed - quota) / quota *
// window, the request-time quota capped at one window.
//
// Sources (Apache Kafka 3.9): core/.../server/ClientQuotaManager.scala,
// ClientRequestQuotaManager.scala, kafka/utils/QuotaUtils.scala,
// clients/.../common/metrics/stats/Rate.java and SampledStat.java,
// Sensor.checkQuotas. docs/quotas.md describes how the broker uses it.
package quota
