package broker

import (
	"cmp"
	"slices"
	"strings"

	"strata/interval"
	"strata/segmeta"
)

// ColumnOrder lists the columns of ds's visible segments in the order Druid's
// SQL layer gives a table's columns (SELECT *, INFORMATION_SCHEMA.COLUMNS'
// ORDINAL_POSITION): __time is not included; see OrderColumns.
// It is kept until the view changes (see columnsMemo).
func (b *Broker) ColumnOrder(ds string) []string {
	return slices.Clone(memoized(b.view, &b.columns, &b.columns.order, ds, b.view.columnOrder))
}

// columnOrder is ColumnOrder read from the view, and the version of the view
// it read (its changed channel).
func (v *view) columnOrder(ds string) ([]string, chan struct{}) {
	var segs []*segmeta.DataSegment
	v.mu.RLock()
	if tl := v.index.Timeline(ds); tl != nil {
		tl.LookupFunc(interval.Eternity, func(h segmeta.Holder) bool {
			segs = append(segs, h.Segments...)
			return true
		})
	}
	version := v.changed
	v.mu.RUnlock()
	return OrderColumns(segs), version
}

// OrderColumns is the column order of a table made of segs, as Druid's
// segment metadata cache builds a table's row signature: segment by segment,
// the newest interval first, each segment's columns in its own order (its
// dimensions as ingested, then its metrics by name, the order Druid's segment
// merger writes them), a column taking its place where it first appears.
func OrderColumns(segs []*segmeta.DataSegment) []string {
	segs = slices.Clone(segs)
	// Druid's order: start descending, then the segment id's own order
	// (end, version, partition ascending).
	slices.SortStableFunc(segs, func(a, b *segmeta.DataSegment) int {
		return cmp.Or(cmp.Compare(b.Interval.Start, a.Interval.Start), cmp.Compare(a.Interval.End, b.Interval.End),
			strings.Compare(a.Version, b.Version), cmp.Compare(a.ShardSpec.PartitionNum, b.ShardSpec.PartitionNum))
	})
	seen := map[string]bool{"__time": true}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, s := range segs {
		for _, d := range s.Dimensions {
			add(d)
		}
		for _, m := range slices.Sorted(slices.Values(s.Metrics)) {
			add(m)
		}
	}
	return out
}
