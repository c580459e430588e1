package controller

import "errors"

// TopicConfigs reads a topic's overrides from /config/topics/<name>, as a
// broker does when it creates the topic's logs. A topic without the znode
// has no overrides.
func (n *Node) TopicConfigs(name string) (map[string]string, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	data, _, err := zk.Get(configEntityPath("topics", name))
	if errors.Is(err, errNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeConfigZNode(data)
}
