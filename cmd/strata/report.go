package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// reportSummary is what the CLI says about a task report: line while the
// task runs, final once it has ended, errorText when it failed.
type reportSummary struct {
	line, final, errorText string
}

// summarize reads a task report, live or final: SQL ingestion's
// multiStageQuery or native batch's ingestionStatsAndErrors. Anything else
// (no report yet, another type) gives an empty summary.
func summarize(raw []byte) reportSummary {
	var doc struct {
		MSQ *struct {
			Payload msqPayload `json:"payload"`
		} `json:"multiStageQuery"`
		Native *struct {
			Payload nativePayload `json:"payload"`
		} `json:"ingestionStatsAndErrors"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &doc) != nil {
		return reportSummary{}
	}
	switch {
	case doc.MSQ != nil:
		return doc.MSQ.Payload.summary()
	case doc.Native != nil:
		return doc.Native.Payload.summary()
	}
	return reportSummary{}
}

// msqPayload is what the CLI reads of a multiStageQuery report.
type msqPayload struct {
	Status struct {
		Status      string `json:"status"`
		ErrorReport *struct {
			StageNumber *int `json:"stageNumber"`
			Error       struct {
				ErrorCode    string `json:"errorCode"`
				ErrorMessage string `json:"errorMessage"`
			} `json:"error"`
		} `json:"errorReport"`
		Warnings    []json.RawMessage `json:"warnings"`
		SegmentLoad *struct {
			State           string `json:"state"`
			TotalSegments   int    `json:"totalSegments"`
			PendingSegments int    `json:"pendingSegments"`
		} `json:"segmentLoadWaiterStatus"`
	} `json:"status"`
	Stages []struct {
		StageNumber int    `json:"stageNumber"`
		Phase       string `json:"phase"`
		WorkerCount int    `json:"workerCount"`
		Definition  struct {
			Input []struct {
				Type string `json:"type"`
			} `json:"input"`
			Processor struct {
				Type string `json:"type"`
			} `json:"processor"`
		} `json:"definition"`
	} `json:"stages"`
	Counters map[string]map[string]map[string]json.RawMessage `json:"counters"`
	Results  *struct {
		Results   []json.RawMessage `json:"results"`
		Truncated bool              `json:"resultsTruncated"`
	} `json:"results"`
}

// stageCounts sums one stage's counters over its workers.
type stageCounts struct {
	rowsIn, bytesIn int64 // every input channel
	sourceRows      int64 // input channels reading external data, tables or inline rows (not stages)
	pushed          int64 // rows in segments pushed to deep storage
	generates       bool  // the stage writes segments
}

func (p *msqPayload) counts(i int) stageCounts {
	var c stageCounts
	inputs := p.Stages[i].Definition.Input
	for _, counters := range p.Counters[strconv.Itoa(p.Stages[i].StageNumber)] {
		for name, raw := range counters {
			switch {
			case strings.HasPrefix(name, "input"):
				var ch struct {
					Rows  []int64 `json:"rows"`
					Bytes []int64 `json:"bytes"`
				}
				if json.Unmarshal(raw, &ch) != nil {
					continue
				}
				rows := sum(ch.Rows)
				c.rowsIn += rows
				c.bytesIn += sum(ch.Bytes)
				if n, err := strconv.Atoi(name[len("input"):]); err == nil && n < len(inputs) && inputs[n].Type != "stage" {
					c.sourceRows += rows
				}
			case name == "segmentGenerationProgress":
				var g struct {
					RowsPushed int64 `json:"rowsPushed"`
				}
				if json.Unmarshal(raw, &g) == nil {
					c.pushed += g.RowsPushed
					c.generates = true
				}
			}
		}
	}
	if p.Stages[i].Definition.Processor.Type == "segmentGenerator" {
		c.generates = true
	}
	return c
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

func (p *msqPayload) summary() reportSummary {
	var s reportSummary
	var sourceRows, pushed int64
	generates := false
	for i := range p.Stages {
		c := p.counts(i)
		sourceRows += c.sourceRows
		pushed += c.pushed
		generates = generates || c.generates
	}
	s.line = p.liveLine(sourceRows)

	parts := []string{plural(len(p.Stages), "stage"), num(sourceRows) + " input rows read"}
	if ls := p.Status.SegmentLoad; ls != nil {
		parts = append(parts, plural(ls.TotalSegments, "segment")+" published")
		if ls.State == "SUCCESS" {
			parts[len(parts)-1] += " and loaded"
		} else {
			parts = append(parts, "segment load "+ls.State)
		}
	} else if generates {
		parts = append(parts, num(pushed)+" rows written to segments")
	}
	if r := p.Results; r != nil {
		res := plural(len(r.Results), "result row")
		if r.Truncated {
			res += " (truncated)"
		}
		parts = append(parts, res)
	}
	if n := len(p.Status.Warnings); n > 0 {
		parts = append(parts, plural(n, "warning"))
	}
	s.final = strings.Join(parts, ", ")
	if e := p.Status.ErrorReport; e != nil {
		s.errorText = "[" + e.Error.ErrorCode + "]"
		if e.Error.ErrorMessage != "" {
			s.errorText += " " + e.Error.ErrorMessage
		}
		if e.StageNumber != nil {
			s.errorText += fmt.Sprintf(" (stage %d)", *e.StageNumber)
		}
	}
	return s
}

// liveLine says where a running query is: the stage reading (or the last
// one started), its phase and rows so far; then the wait for segments.
func (p *msqPayload) liveLine(sourceRows int64) string {
	if ls := p.Status.SegmentLoad; ls != nil && (ls.State == "WAITING" || ls.State == "INIT") {
		s := fmt.Sprintf("%s published, waiting for them to load", plural(ls.TotalSegments, "segment"))
		if ls.PendingSegments > 0 {
			s += fmt.Sprintf(" (%d pending)", ls.PendingSegments)
		}
		return s
	}
	cur := -1
	for i, st := range p.Stages {
		switch st.Phase {
		case "READING_INPUT", "POST_READING", "MERGING_STATISTICS":
			cur = i
		}
	}
	if cur < 0 {
		for i, st := range p.Stages {
			if st.Phase != "" && st.Phase != "NEW" {
				cur = i
			}
		}
	}
	if cur < 0 {
		return fmt.Sprintf("%s planned, starting", plural(len(p.Stages), "stage"))
	}
	st := p.Stages[cur]
	c := p.counts(cur)
	s := fmt.Sprintf("stage %d of %d (%s) %s", st.StageNumber, len(p.Stages), st.Definition.Processor.Type, st.Phase)
	if st.WorkerCount > 0 {
		s += ", " + plural(st.WorkerCount, "worker")
	}
	s += ": " + num(c.rowsIn) + " rows read"
	if c.bytesIn > 0 {
		s += " (" + byteSize(c.bytesIn) + ")"
	}
	if c.generates {
		s += ", " + num(c.pushed) + " rows pushed to segments"
		if st.Phase == "RESULTS_READY" {
			s += ", publishing"
		}
	}
	if sourceRows != c.rowsIn {
		s += "; " + num(sourceRows) + " input rows in all"
	}
	return s
}

// nativePayload is what the CLI reads of an ingestionStatsAndErrors report.
type nativePayload struct {
	IngestionState string `json:"ingestionState"`
	RowStats       struct {
		BuildSegments *rowStats `json:"buildSegments"`
	} `json:"rowStats"`
	ErrorMsg          *string `json:"errorMsg"`
	Confirmed         bool    `json:"segmentAvailabilityConfirmed"`
	WaitMs            int64   `json:"segmentAvailabilityWaitTimeMs"`
	SegmentsPublished int     `json:"segmentsPublished"`
}

type rowStats struct {
	Processed          int64 `json:"processed"`
	ProcessedBytes     int64 `json:"processedBytes"`
	ProcessedWithError int64 `json:"processedWithError"`
	ThrownAway         int64 `json:"thrownAway"`
	Unparseable        int64 `json:"unparseable"`
}

func (r rowStats) String() string {
	s := num(r.Processed) + " rows processed"
	if r.ProcessedBytes > 0 {
		s += " (" + byteSize(r.ProcessedBytes) + ")"
	}
	return s + fmt.Sprintf(", %s with errors, %s thrown away, %s unparseable",
		num(r.ProcessedWithError), num(r.ThrownAway), num(r.Unparseable))
}

func (p *nativePayload) summary() reportSummary {
	var s reportSummary
	var rs rowStats
	if p.RowStats.BuildSegments != nil {
		rs = *p.RowStats.BuildSegments
	}
	switch p.IngestionState {
	case "NOT_STARTED":
		s.line = "starting (NOT_STARTED)"
	case "SEGMENT_AVAILABILITY_WAIT":
		s.line = fmt.Sprintf("%s, %s published, waiting for them to load", rs, plural(p.SegmentsPublished, "segment"))
	default:
		s.line = p.IngestionState + ": " + rs.String()
	}
	s.final = rs.String() + ", " + plural(p.SegmentsPublished, "segment") + " published"
	switch {
	case p.Confirmed:
		s.final += " and loaded"
	case p.WaitMs > 0:
		s.final += fmt.Sprintf(", not confirmed loaded after %.1fs", float64(p.WaitMs)/1000)
	}
	if p.ErrorMsg != nil {
		s.errorText = *p.ErrorMsg
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return num(int64(n)) + " " + what + "s"
}

// num writes n with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// byteSize writes a byte count in B, KB, MB or GB (powers of 1000).
func byteSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
