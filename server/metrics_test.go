package server

import (
	"testing"
)

// The ReplicaManager gauges count what this broker hosts and leads; a
// standalone broker leads every partition it hosts, none under-replicated.
func TestReplicaManagerMetrics(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "m", 4, nil)
	families, err := ab.b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	series := map[string]int{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			series[f.GetName()]++
			if g := m.GetGauge(); g != nil {
				got[f.GetName()] = g.GetValue()
			}
		}
	}
	for name, want := range map[string]float64{
		"kafka_server_replicamanager_leadercount":               4,
		"kafka_server_replicamanager_partitioncount":            4,
		"kafka_server_replicamanager_underreplicatedpartitions": 0,
		"kafka_server_replicamanager_underminisrpartitioncount": 0,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if series["kafka_log_partition_highwatermark"] != 4 || series["kafka_log_log_logendoffset"] != 4 {
		t.Errorf("per-partition gauges: %d HW and %d LEO series, want 4 each", series["kafka_log_partition_highwatermark"], series["kafka_log_log_logendoffset"])
	}
	if series["kafka_cluster_partition_laststableoffsetlag"] != 4 || got["kafka_cluster_partition_laststableoffsetlag"] != 0 {
		t.Errorf("LastStableOffsetLag: %d series, last %v, want 4 at 0 (no transactions)", series["kafka_cluster_partition_laststableoffsetlag"], got["kafka_cluster_partition_laststableoffsetlag"])
	}
}
