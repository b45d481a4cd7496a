package segment

import (
	"math"
	"math/rand/v2"
	"testing"
)

// LongsAt and DoublesAt must agree with the whole-block decoders for every
// numeric kind, codec and block, including __time (delta coded).
func TestGatherMatchesBlockDecode(t *testing.T) {
	for _, comp := range []Compression{CompressNone, CompressLZ4, CompressZstd, CompressAuto} {
		rng := rand.New(rand.NewPCG(7, uint64(comp)))
		spec := allKindsSpec(300)
		spec.Compression = comp
		rows := make([]Row, 2000)
		for i := range rows {
			rows[i] = randRow(rng, int64(i)*1000)
		}
		path, _ := writeSegment(t, spec, rows)
		seg := mustOpen(t, path)
		cols := []*NumericColumn{seg.Time()}
		for _, name := range []string{"l", "d", "f", "lsum", "dsum", "fmax", "lnull"} {
			c, err := seg.Numeric(name)
			if err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		for _, c := range cols {
			for b := range c.NumBlocks() {
				start, end := seg.BlockRows(b)
				var sel []int32
				for i := range end - start {
					if rng.IntN(4) == 0 {
						sel = append(sel, int32(i))
					}
				}
				allL, err := c.Longs(b, nil)
				if err != nil {
					t.Fatal(err)
				}
				allD, err := c.Doubles(b, nil)
				if err != nil {
					t.Fatal(err)
				}
				gl, err := c.LongsAt(b, sel, nil)
				if err != nil {
					t.Fatal(err)
				}
				gd, err := c.DoublesAt(b, sel, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(gl) != len(sel) || len(gd) != len(sel) {
					t.Fatalf("%s block %d: %d/%d values for %d rows", c.Info().Name, b, len(gl), len(gd), len(sel))
				}
				for k, i := range sel {
					if gl[k] != allL[i] || math.Float64bits(gd[k]) != math.Float64bits(allD[i]) {
						t.Fatalf("%s (%v) block %d row %d: got %d/%v, want %d/%v", c.Info().Name, comp, b, i, gl[k], gd[k], allL[i], allD[i])
					}
				}
			}
		}
		if _, err := cols[1].LongsAt(0, []int32{300}, nil); err == nil {
			t.Fatal("row past the block accepted")
		}
	}
}
