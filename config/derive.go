package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// derive resolves keys that depend on others and checks the rules Kafka
// applies across keys at start-up.
func (c *Config) derive() error {
	if err := c.deriveListeners(); err != nil {
		return err
	}
	c.LogDirs = parseList(c.values["log.dirs"])
	if len(c.LogDirs) == 0 {
		c.LogDirs = parseList(c.values["log.dir"])
	}
	if len(c.LogDirs) == 0 {
		return &ValueError{Key: "log.dirs", Value: c.values["log.dirs"], Reason: "no log directory"}
	}
	c.LogRetention = c.firstMs(unitKey{"log.retention.ms", time.Millisecond}, unitKey{"log.retention.minutes", time.Minute}, unitKey{"log.retention.hours", time.Hour})
	if c.LogRetention < 0 {
		// Kafka treats every negative retention as -1, forever.
		c.LogRetention = -time.Millisecond
	}
	c.LogRoll = c.firstMs(unitKey{"log.roll.ms", time.Millisecond}, unitKey{"log.roll.hours", time.Hour})
	c.LogRollJitter = c.firstMs(unitKey{"log.roll.jitter.ms", time.Millisecond}, unitKey{"log.roll.jitter.hours", time.Hour})
	if c.values["log.flush.interval.ms"] == "" {
		c.LogFlushInterval = c.firstMs(unitKey{"log.flush.scheduler.interval.ms", time.Millisecond})
	}
	if c.ZookeeperConnectionTimeout == 0 {
		c.ZookeeperConnectionTimeout = c.ZookeeperSessionTimeout
	}
	if c.BrokerID == -1 && c.Standalone() {
		return &ValueError{Key: "broker.id", Value: "-1", Reason: "broker id generation needs zookeeper.connect; set a broker.id >= 0"}
	}
	if c.ReplicaFetchWaitMax > c.ReplicaSocketTimeout {
		return &ValueError{Key: "replica.fetch.wait.max.ms", Value: c.values["replica.fetch.wait.max.ms"], Reason: "must be no more than replica.socket.timeout.ms"}
	}
	if c.ReplicaFetchWaitMax > c.ReplicaLagTimeMax {
		return &ValueError{Key: "replica.fetch.wait.max.ms", Value: c.values["replica.fetch.wait.max.ms"], Reason: "must be no more than replica.lag.time.max.ms"}
	}
	if err := c.deriveSecurity(); err != nil {
		return err
	}
	if err := c.deriveRequestLimits(); err != nil {
		return err
	}
	if c.MetricsListener != "" {
		if _, port, err := net.SplitHostPort(c.MetricsListener); err != nil || !validPort(port) {
			return &ValueError{Key: "metrics.listener", Value: c.MetricsListener, Reason: "want host:port"}
		}
	}
	return nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

type unitKey struct {
	name string
	unit time.Duration
}

// firstMs returns the first key that has a value, converted to a Duration:
// Kafka lets the finer unit win (ms over minutes over hours). The last key
// always has a default.
func (c *Config) firstMs(keys ...unitKey) time.Duration {
	for _, k := range keys {
		if v := c.values[k.name]; v != "" {
			n, _ := strconv.ParseInt(v, 10, 64)
			return msDuration(n, k.unit)
		}
	}
	return 0
}

func (c *Config) deriveListeners() error {
	var err error
	if c.Listeners, err = parseListeners(c.values["listeners"]); err != nil {
		return &ValueError{Key: "listeners", Value: c.values["listeners"], Reason: err.Error()}
	}
	if c.ListenerSecurityProtocolMap, err = parseProtocolMap(c.values["listener.security.protocol.map"]); err != nil {
		return &ValueError{Key: "listener.security.protocol.map", Value: c.values["listener.security.protocol.map"], Reason: err.Error()}
	}
	for _, l := range c.Listeners {
		proto, ok := c.ListenerSecurityProtocolMap[l.Name]
		if !ok {
			return &ValueError{Key: "listener.security.protocol.map", Value: c.values["listener.security.protocol.map"], Reason: fmt.Sprintf("no security protocol defined for listener %s", l.Name)}
		}
		switch proto {
		case Plaintext, SSL, SASLPlaintext, SASLSSL:
		default:
			return &ValueError{Key: "listener.security.protocol.map", Value: c.values["listener.security.protocol.map"], Reason: fmt.Sprintf("listener %s uses unknown security protocol %s", l.Name, proto)}
		}
	}
	if adv := c.values["advertised.listeners"]; adv != "" {
		if c.AdvertisedListeners, err = parseListeners(adv); err != nil {
			return &ValueError{Key: "advertised.listeners", Value: adv, Reason: err.Error()}
		}
		for _, a := range c.AdvertisedListeners {
			if a.Host == "0.0.0.0" || a.Host == "::" {
				return &ValueError{Key: "advertised.listeners", Value: adv, Reason: "cannot use the nonroutable meta-address " + a.Host}
			}
			if !c.hasListener(a.Name) {
				return &ValueError{Key: "advertised.listeners", Value: adv, Reason: fmt.Sprintf("listener %s is not in listeners", a.Name)}
			}
		}
	} else {
		c.AdvertisedListeners = advertise(c.Listeners)
	}
	c.InterBrokerListenerName = strings.ToUpper(c.values["inter.broker.listener.name"])
	if c.InterBrokerListenerName == "" {
		// Kafka names it after security.inter.broker.protocol and refuses
		// to start when no listener has that name; kbroker falls back to
		// the first listener speaking that protocol, then to the first
		// listener (docs/beyond-kafka.md).
		want := strings.ToUpper(c.values["security.inter.broker.protocol"])
		c.InterBrokerListenerName = c.Listeners[0].Name
		if c.hasListener(want) {
			c.InterBrokerListenerName = want
		} else {
			for _, l := range c.Listeners {
				if c.ListenerSecurityProtocolMap[l.Name] == want {
					c.InterBrokerListenerName = l.Name
					break
				}
			}
		}
		return nil
	}
	if c.IsSet("security.inter.broker.protocol") {
		return &ValueError{Key: "security.inter.broker.protocol", Value: c.values["security.inter.broker.protocol"], Reason: "only one of inter.broker.listener.name and security.inter.broker.protocol should be set"}
	}
	if _, ok := c.AdvertisedListener(c.InterBrokerListenerName); !ok {
		return &ValueError{Key: "inter.broker.listener.name", Value: c.InterBrokerListenerName, Reason: "must be a listener name defined in advertised.listeners"}
	}
	return nil
}

func (c *Config) hasListener(name string) bool {
	for _, l := range c.Listeners {
		if l.Name == name {
			return true
		}
	}
	return false
}

// AdvertisedListener returns the advertised listener called name.
func (c *Config) AdvertisedListener(name string) (Listener, bool) {
	for _, l := range c.AdvertisedListeners {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}
