package commands

import "encoding/json"

// UpdateLookups adds or replaces lookups, tier by tier: Druid's bulk update
// of /lookups/config, which a single lookup's POST also is. An empty Tiers
// initialises the lookup configuration (Druid refuses updates until it is).
// Each value is the lookup container JSON as posted; the FSM validates it
// (package lookups) and stores its canonical form.
type UpdateLookups struct {
	Tiers map[string]map[string]json.RawMessage `json:"tiers"`
}

// CommandType implements Command.
func (UpdateLookups) CommandType() string { return "lookups.update" }

// DeleteLookup removes one lookup from a tier.
type DeleteLookup struct {
	Tier   string `json:"tier"`
	Lookup string `json:"lookup"`
}

// CommandType implements Command.
func (DeleteLookup) CommandType() string { return "lookups.delete" }

// DeleteLookupTier removes a tier and every lookup in it.
type DeleteLookupTier struct {
	Tier string `json:"tier"`
}

// CommandType implements Command.
func (DeleteLookupTier) CommandType() string { return "lookups.tier.delete" }

func init() {
	Register(UpdateLookups{}, false)
	Register(DeleteLookup{}, false)
	Register(DeleteLookupTier{}, false)
}
