package server

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeCluster(t *testing.T) {
	ab := startAdminBroker(t, "broker.id=4")
	req := kmsg.NewPtrDescribeClusterRequest()
	resp := request[*kmsg.DescribeClusterResponse](t, ab.pinned(t, kmsg.DescribeCluster.Int16(), 1), req)
	if resp.ErrorCode != 0 || resp.ControllerID != 4 || resp.ClusterID == "" || resp.ClusterID != ab.b.logs.ClusterID() {
		t.Fatalf("%+v", resp)
	}
	_, port, _ := net.SplitHostPort(ab.addr)
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 4 || resp.Brokers[0].Host != "127.0.0.1" || strconv.Itoa(int(resp.Brokers[0].Port)) != port || resp.Brokers[0].Rack != nil {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	if resp.ClusterAuthorizedOperations != authorizedOperationsNotRequested {
		t.Fatalf("authorized operations %d when not requested", resp.ClusterAuthorizedOperations)
	}
	req.IncludeClusterAuthorizedOperations = true
	if got := request[*kmsg.DescribeClusterResponse](t, ab.cl, req).ClusterAuthorizedOperations; got != clusterAuthorizedOperations {
		t.Fatalf("authorized operations %b", got)
	}

	req.EndpointType = 2
	resp = request[*kmsg.DescribeClusterResponse](t, ab.pinned(t, kmsg.DescribeCluster.Int16(), 1), req)
	if resp.ErrorCode != kerr.UnsupportedEndpointType.Code || len(resp.Brokers) != 0 {
		t.Fatalf("controller endpoints: %s, %d brokers", errName(resp.ErrorCode), len(resp.Brokers))
	}

	md, err := ab.adm.BrokerMetadata(testCtx(t))
	if err != nil || md.Controller != 4 || len(md.Brokers) != 1 {
		t.Fatalf("kadm metadata %+v %v", md, err)
	}
}
