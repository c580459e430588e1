package main

import (
	"fmt"
	"strings"
)

// saslSSLWorkloads pairs each workload run through the SASL_SSL listeners
// with the plaintext workload it repeats: the same records, the same tool
// and settings, only the listener differs.
var saslSSLWorkloads = []struct{ what, name, plaintext string }{
	{"produce over SASL_SSL", "produce-1k-sasl-ssl", "produce-1k-acks1"},
	{"consume over SASL_SSL", "consume-sasl-ssl", "consume-2gib"},
}

// ownRatio is one broker's median of metric on workload over its median on
// base; ok is false when either is missing or base's is zero.
func (s summary) ownRatio(workload, base, broker, metricName string) (float64, bool) {
	w, b := s.get(workload, broker, metricName), s.get(base, broker, metricName)
	if !w.ok || !b.ok || b.v == 0 {
		return 0, false
	}
	return w.v / b.v, true
}

// renderSecurityCost shows what SASL_SSL costs each broker against its own
// plaintext listener: throughput and broker CPU per GB, SASL_SSL over
// plaintext. Left out when no SASL_SSL workload ran.
func renderSecurityCost(b *strings.Builder, s summary) {
	any := false
	for _, w := range saslSSLWorkloads {
		any = any || s.ran(w.name)
	}
	if !any {
		return
	}
	b.WriteString("**Cost of SASL_SSL**: each broker's SASL_SSL figure over its own plaintext one " +
		"(TLS, SCRAM-SHA-512 login; no sendfile under TLS for either broker).\n\n" +
		"| workload | plaintext workload | Kafka MB/s | kbroker MB/s | Kafka broker CPU s/GB | kbroker broker CPU s/GB |\n" +
		"| --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, w := range saslSSLWorkloads {
		if !s.ran(w.name) {
			continue
		}
		fmt.Fprintf(b, "| %s | %s |", w.name, w.plaintext)
		for _, m := range []string{"MB/s", "broker CPU s/GB"} {
			for _, broker := range brokers {
				if r, ok := s.ownRatio(w.name, w.plaintext, broker, m); ok {
					fmt.Fprintf(b, " %.2f× |", r)
				} else {
					b.WriteString(" – |")
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
