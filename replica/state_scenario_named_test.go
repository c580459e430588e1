package replica

import "testing"

// One test per leader-epoch scenario (KIP-101, KIP-279), named after
// Kafka's test where it has one (AbstractFetcherThreadTest, and Kafka 3.9's
// EpochDrivenReplicationProtocolAcceptanceTest). The scenarios live in
// testdata/*.txt.

func TestKIP101HighWatermarkTruncationThenLeaderElection(t *testing.T) {
	runScenarioFile(t, "kip101HighWatermarkTruncationThenLeaderElection")
}

func TestShouldNotAllowDivergentLogs(t *testing.T) {
	runScenarioFile(t, "shouldNotAllowDivergentLogs")
}

func TestOffsetsShouldNotGoBackwards(t *testing.T) {
	runScenarioFile(t, "offsetsShouldNotGoBackwards")
}

func TestKIP279FastLeaderFailover(t *testing.T) {
	runScenarioFile(t, "kip279FastLeaderFailover")
}

func TestLogsShouldNotDivergeOnUncleanLeaderElections(t *testing.T) {
	runScenarioFile(t, "logsShouldNotDivergeOnUncleanLeaderElections")
}

func TestShouldFollowLeaderEpochBasicWorkflow(t *testing.T) {
	runScenarioFile(t, "shouldFollowLeaderEpochBasicWorkflow")
}

func TestShouldSurviveFastLeaderChange(t *testing.T) {
	runScenarioFile(t, "shouldSurviveFastLeaderChange")
}

func TestDivergingEpochs(t *testing.T) {
	runScenarioFile(t, "testDivergingEpochs")
}

func TestTruncation(t *testing.T) {
	runScenarioFile(t, "testTruncation")
}
