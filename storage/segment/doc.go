// Package segment implements Strata's columnar segment files: the Writer and
// Builder that produce them from rows (with optional rollup), and the
// memory-mapped Segment reader used by the query engine. The byte format is
// specified, with its version number, in docs/segment-format.md; this
// package writes and reads FormatVersion.
//
// # Writing
//
// A Spec lists the input Fields (the layout of each Row), the stored
// Dimensions (string, possibly multi-value, or long/float/double) and
// Metrics (Druid aggregator specs: count, longSum, ..., HLLSketchBuild,
// thetaSketch, quantilesDoublesSketch; the JSON form unmarshals from an ingestion spec's
// metricsSpec), Rollup, the query-granularity Truncate function, optional
// SortColumns and the time-chunk Interval. Rows are typed: a Row is a
// timestamp in epoch ms plus one Value per field, built with Long, Double,
// String, Strings, Bytes or Null; a caller reuses one Row for every input
// row and nothing is allocated per row on the hot path.
//
//	b, err := segment.NewBuilder(spec, maxRowsPerSegment, segment.DirPaths(dir, "wiki_2024-01-01"))
//	row := segment.Row{Values: make([]segment.Value, len(spec.Fields))}
//	for each input row {
//		row.Time = ts
//		row.Values[0] = segment.String(channel)
//		row.Values[1] = segment.Long(added)
//		if err := b.Add(row); err != nil { ... }
//	}
//	partitions, err := b.Close() // []Info: path, rows, bytes, time range
//
// Builder keeps one partition in memory and writes it when it reaches the
// row cap; Writer is the single-segment building block (Add, WriteFile).
// Rows are sorted by truncated __time, then by the sort columns (null first,
// strings in byte order), then by the remaining dimensions. Files are
// written to a temporary name, synced and renamed.
//
// # Reading
//
//	s, err := segment.Open(path) // mmap; verifies header, trailer and footer checksum
//	defer s.Close()
//	s.NumRows(); s.Interval(); s.TimeRange(); s.Columns() // schema and statistics
//
// Columns are read block by block (RowsPerBlock rows each, the last one
// shorter; BlockRows gives a block's row range) into caller-provided
// buffers, so a scan allocates nothing per block:
//
//	t := s.Time()                       // *NumericColumn over __time
//	ts, err = t.Longs(b, ts)            // or s.Times(all) for the whole column
//	n, err := s.Numeric("added")        // long, float or double
//	st := n.BlockStats(b)               // min/max/null count from the footer: skip blocks
//	vals, err = n.Longs(b, vals)        // also Doubles, Floats (converting)
//	nulls, err := n.Nulls()             // roaring bitmap of null rows
//
//	c, err := s.Strings("channel")
//	c.Cardinality()                     // dictionary ids, counting null (id 0 when present)
//	id, found, err := c.Find("#ch07")   // binary search on the sorted dictionary
//	v, isNull, err := c.Lookup(id)      // or c.Dictionary() for AppendValue/ForEach
//	ids, err = c.IDs(from, to, ids)     // single-value rows; BlockIDs per block
//	offs, ids, err = c.MultiIDs(from, to, offs, ids) // row i: ids[offs[i]:offs[i+1]]
//	bm, err := c.Bitmap(id)             // rows holding id (the index filters use)
//	nb, err := c.NullBitmap()           // null rows (multi-value: also empty rows)
//
//	x, err := s.Complex("user_hll")     // x.Type(): blob.TypeHLL, ...
//	err = x.Block(b, &blobs)            // blobs.At(i) is row start+i's blob
//	one, err := x.Blob(row)             // copy of one row's blob
//
// Package blob decodes the blobs (sketches, first/last pairs).
//
// # Integrity
//
// Every stored byte is covered by a CRC32C: the footer's is checked by Open.
// The file may change under the mapping while it is open (a write to it,
// or a page the kernel evicted and read back from a failing disk), so a
// check made once does not vouch for later reads of the mapping: a block is
// copied out of it and checked, and the copy is what is decoded (the block
// cache, shared by all segments within a byte budget, keeps recent verified
// copies for later reads); each region (dictionary, posting offsets, postings, null and
// empty-row bitmaps) is copied and checked on its first read, and that
// heap copy serves every later one. Verify checks the whole file as it is
// now. Damage or truncation is reported as an error wrapping ErrCorrupt,
// never as wrong data or a panic; decoders also validate structure (counts,
// widths, dictionary order, id ranges) behind the checksums.
//
// # Concurrency and lifetime
//
// A Segment is safe for concurrent use. Nothing a reader returns points
// into the mapping: bitmaps returned by Bitmap and Nulls reference the
// region copies and are copy-on-write (modifying them is safe), and blobs
// point into shared block copies (not to be modified). Close must not
// be called while readers are active. Writers and Builders are not safe for
// concurrent use.
package segment
