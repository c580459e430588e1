package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// parseTyped checks that v parses as t the way Kafka's ConfigDef.parseType
// does (booleans case-insensitively, numbers in the type's range).
func parseTyped(t kmsg.ConfigType, v string) error {
	var err error
	switch t {
	case kmsg.ConfigTypeBoolean:
		_, err = parseBool(v)
	case kmsg.ConfigTypeShort:
		_, err = parseIntRange(v, 16)
	case kmsg.ConfigTypeInt:
		_, err = parseIntRange(v, 32)
	case kmsg.ConfigTypeLong:
		_, err = parseIntRange(v, 64)
	case kmsg.ConfigTypeDouble:
		_, err = strconv.ParseFloat(v, 64)
		if err != nil {
			err = errors.New("not a number of type DOUBLE")
		}
	}
	return err
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("expected value to be either true or false")
}

func parseIntRange(v string, bits int) (int64, error) {
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		names := map[int]string{16: "SHORT", 32: "INT", 64: "LONG"}
		return 0, fmt.Errorf("not a number of type %s", names[bits])
	}
	return n, nil
}

// parseList splits a Kafka LIST value: comma-separated, entries trimmed,
// an empty value is an empty list.
func parseList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// msDuration turns a count of unit into a Duration, saturating at the
// largest Duration: Kafka spells "never" as Long.MaxValue milliseconds.
func msDuration(n int64, unit time.Duration) time.Duration {
	if n > 0 && n > math.MaxInt64/int64(unit) {
		return math.MaxInt64
	}
	if n < 0 && n < math.MinInt64/int64(unit) {
		return math.MinInt64
	}
	return time.Duration(n) * unit
}

// Millis is the inverse of msDuration: the largest Duration is Kafka's
// Long.MaxValue ms again, so "never" survives the round trip.
func Millis(d time.Duration) int64 {
	if d == math.MaxInt64 {
		return math.MaxInt64
	}
	return d.Milliseconds()
}

func atLeast(min int64) func(int64) error {
	return func(n int64) error {
		if n < min {
			return fmt.Errorf("value must be at least %d", min)
		}
		return nil
	}
}

func between(min, max int64) func(int64) error {
	return func(n int64) error {
		if n < min || n > max {
			return fmt.Errorf("value must be no less than %d and no more than %d", min, max)
		}
		return nil
	}
}

func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("string must be one of: %s", strings.Join(allowed, ", "))
	}
}

// listOf checks every entry of a LIST against allowed (Kafka's ValidList).
func listOf(allowed ...string) func(string) error {
	in := oneOf(allowed...)
	return func(v string) error {
		for _, e := range parseList(v) {
			if err := in(e); err != nil {
				return fmt.Errorf("invalid value %s: %w", e, err)
			}
		}
		return nil
	}
}

// Kafka's ReplicaSelector implementations (KIP-392), the only values
// replica.selector.class takes: kbroker loads no Java classes.
const (
	LeaderSelectorClass           = "org.apache.kafka.common.replica.LeaderSelector"
	RackAwareReplicaSelectorClass = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
)

func replicaSelectorClass(v string) error {
	if v == LeaderSelectorClass || v == RackAwareReplicaSelectorClass {
		return nil
	}
	return fmt.Errorf("kbroker runs only Kafka's own replica selectors: %s or %s", RackAwareReplicaSelectorClass, LeaderSelectorClass)
}
