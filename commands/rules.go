package commands

import "encoding/json"

// SetRules replaces the retention rules of a datasource, or the cluster
// defaults when DataSource is "_default". Rules is the JSON array of rule
// objects as posted; the FSM validates it (package rules) and stores its
// canonical form, so every node keeps the same bytes.
type SetRules struct {
	DataSource string          `json:"dataSource"`
	Rules      json.RawMessage `json:"rules"`
}

// CommandType implements Command.
func (SetRules) CommandType() string { return "rules.set" }

func init() {
	Register(SetRules{}, false)
}
