package engine

import (
	"encoding/json"

	"strata/aggregate"
	"strata/javacompat"
)

// dimColJSON is the wire form of a DimCol.
type dimColJSON struct {
	Type    string                `json:"type"`
	Strs    aggregate.WireStrings `json:"strs,omitempty"`
	Longs   aggregate.WireLongs   `json:"longs,omitempty"`
	Doubles aggregate.Floats      `json:"doubles,omitempty"`
	Null    aggregate.WireBools   `json:"null"`
}

// wireDimCol is a DimCol with the packed codec. (DimCol itself keeps the
// default one: ScanCol embeds it, and would take its methods.)
type wireDimCol DimCol

// MarshalJSON implements json.Marshaler.
// It writes the fields directly: a nested json.Marshal would re-scan the
// packed columns once more.
func (d *wireDimCol) MarshalJSON() ([]byte, error) {
	b := append([]byte(`{"type":`), javacompat.AppendJSONString(nil, d.Type)...)
	b, err := aggregate.AppendField(b, "strs", aggregate.WireStrings(d.Strs))
	if err == nil {
		b, err = aggregate.AppendField(b, "longs", aggregate.WireLongs(d.Longs))
	}
	if err == nil {
		b, err = aggregate.AppendField(b, "doubles", aggregate.Floats(d.Doubles))
	}
	if err == nil {
		b, err = aggregate.AppendField(b, "null", aggregate.WireBools(d.Null), true)
	}
	return append(b, '}'), err
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *wireDimCol) UnmarshalJSON(data []byte) error {
	var j dimColJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*d = wireDimCol{Type: j.Type, Strs: j.Strs, Longs: j.Longs, Doubles: j.Doubles, Null: j.Null}
	return nil
}

// partialAlias has Partial's fields without its JSON methods.
type partialAlias Partial

// partialJSON is the wire form of a Partial: its row times and
// dimension columns packed.
type partialJSON struct {
	*partialAlias
	Times aggregate.WireLongs `json:"times,omitempty"`
	Dims  []*wireDimCol       `json:"dims,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (p *Partial) MarshalJSON() ([]byte, error) {
	j := partialJSON{partialAlias: (*partialAlias)(p), Times: p.Times}
	if p.Dims != nil {
		j.Dims = make([]*wireDimCol, len(p.Dims))
		for i, d := range p.Dims {
			j.Dims[i] = (*wireDimCol)(d)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Partial) UnmarshalJSON(data []byte) error {
	j := partialJSON{partialAlias: (*partialAlias)(p), Times: p.Times}
	for _, d := range p.Dims {
		j.Dims = append(j.Dims, (*wireDimCol)(d))
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	p.Times = j.Times
	if j.Dims != nil {
		p.Dims = make([]*DimCol, len(j.Dims))
		for i, d := range j.Dims {
			p.Dims[i] = (*DimCol)(d)
		}
	}
	return nil
}
