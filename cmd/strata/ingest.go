package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// runIngest implements `strata ingest --sql FILE|-`: submit SQL-based ingestion,
// follow the task with a progress line (stage, phase, rows read), and print the
// report's summary.
func runIngest(args []string) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	sqlFile := fs.String("sql", "", "file holding the INSERT/REPLACE statement, or - for stdin (required)")
	url := fs.String("url", "http://127.0.0.1:8888", "router (or overlord/broker) URL")
	ctxJSON := fs.String("context", "", `query context as JSON, e.g. {"maxNumTasks":3}`)
	noWait := fs.Bool("no-wait", false, "submit and print the task id without following it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sqlFile == "" {
		return errors.New("--sql FILE (or --sql -) is required")
	}
	var src []byte
	var err error
	if *sqlFile == "-" {
		src, err = io.ReadAll(os.Stdin)
	} else {
		src, err = os.ReadFile(*sqlFile)
	}
	if err != nil {
		return err
	}
	body := map[string]any{"query": string(src)}
	if *ctxJSON != "" {
		var c map[string]any
		if err := json.Unmarshal([]byte(*ctxJSON), &c); err != nil {
			return fmt.Errorf("--context: %w", err)
		}
		body["context"] = c
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(strings.TrimRight(*url, "/")+"/svc/v2/sql/task", "application/json", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("submit: %w (is the cluster up? strata quickstart)", err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("submit rejected (HTTP %d): %s", resp.StatusCode, out)
	}
	var sub struct {
		TaskID string `json:"taskId"`
		State  string `json:"state"`
	}
	if err := json.Unmarshal(out, &sub); err != nil {
		return fmt.Errorf("submit: unexpected answer %s", out)
	}
	fmt.Fprintf(os.Stderr, "task %s %s\n", sub.TaskID, sub.State)
	if *noWait {
		fmt.Println(sub.TaskID)
		return nil
	}
	return waitTask(*url, sub.TaskID, true)
}

// runTask implements `strata task status|wait|cancel ID`.
func runTask(args []string) error {
	if len(args) < 1 {
		return errors.New("usage: strata task status|wait|cancel ID [--url URL]")
	}
	verb := args[0]
	fs := flag.NewFlagSet("task "+verb, flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8888", "router (or overlord) URL")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: strata task status|wait|cancel ID [--url URL]")
	}
	id := fs.Arg(0)
	base := strings.TrimRight(*url, "/") + "/svc/indexer/v1/task/" + id
	switch verb {
	case "status":
		code, body, err := httpGet(base + "/status")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("task %s: HTTP %d %s", id, code, body)
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, body, "", "  ")
		fmt.Println(pretty.String())
		return nil
	case "wait":
		return waitTask(*url, id, true)
	case "cancel":
		resp, err := http.Post(base+"/shutdown", "application/json", nil)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("cancel %s: HTTP %d %s", id, resp.StatusCode, b)
		}
		fmt.Printf("cancel requested for %s\n", id)
		return nil
	}
	return fmt.Errorf("unknown task command %q: use status, wait or cancel", verb)
}

func httpGet(url string) (int, []byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitTask polls status and report until the task ends, showing progress.
func waitTask(url, id string, progress bool) error {
	base := strings.TrimRight(url, "/") + "/svc/indexer/v1/task/" + id
	start := time.Now()
	for {
		code, body, err := httpGet(base + "/status")
		if err != nil {
			return err
		}
		var st struct {
			Status struct {
				Status   string `json:"status"`
				ErrorMsg string `json:"errorMsg"`
				Duration int64  `json:"duration"`
			} `json:"status"`
		}
		if code == 200 {
			json.Unmarshal(body, &st)
		}
		_, rep, _ := httpGet(base + "/reports")
		sum := summarize(rep)
		if progress {
			fmt.Fprintf(os.Stderr, "\r%-9s %5.1fs  %s", st.Status.Status, time.Since(start).Seconds(), sum.line)
		}
		switch st.Status.Status {
		case "SUCCESS":
			fmt.Fprintln(os.Stderr)
			fmt.Printf("task %s SUCCESS in %.1fs: %s\n", id, time.Since(start).Seconds(), sum.final)
			return nil
		case "FAILED":
			fmt.Fprintln(os.Stderr)
			return fmt.Errorf("task %s FAILED: %s %s", id, st.Status.ErrorMsg, sum.errorText)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type reportSummary struct {
	line, final, errorText string
}

// summarize reads a multiStageQuery report: the current stage and phase, rows
// read so far, and at the end the segments published.
func summarize(raw []byte) reportSummary {
	var r struct {
		MSQ struct {
			Payload struct {
				Status struct {
					Status      string `json:"status"`
					ErrorReport *struct {
						Error struct {
							ErrorCode    string `json:"errorCode"`
							ErrorMessage string `json:"errorMessage"`
						} `json:"error"`
					} `json:"errorReport"`
					SegmentLoad *struct {
						State         string `json:"state"`
						TotalSegments int    `json:"totalSegments"`
					} `json:"segmentLoadWaiterStatus"`
				} `json:"status"`
				Stages []struct {
					StageNumber int    `json:"stageNumber"`
					Phase       string `json:"phase"`
					Definition  struct {
						Processor struct {
							Type string `json:"type"`
						} `json:"processor"`
					} `json:"definition"`
				} `json:"stages"`
				Counters map[string]map[string]map[string]json.RawMessage `json:"counters"`
			} `json:"payload"`
		} `json:"multiStageQuery"`
	}
	var s reportSummary
	if json.Unmarshal(raw, &r) != nil {
		return s
	}
	p := r.MSQ.Payload
	var rows int64
	for _, workers := range p.Counters["0"] {
		if in, ok := workers["input0"]; ok {
			var c struct {
				Rows []int64 `json:"rows"`
			}
			json.Unmarshal(in, &c)
			for _, n := range c.Rows {
				rows += n
			}
		}
	}
	cur := ""
	for _, st := range p.Stages {
		if st.Phase != "FINISHED" && st.Phase != "" {
			cur = fmt.Sprintf("stage %d (%s) %s", st.StageNumber, st.Definition.Processor.Type, st.Phase)
			break
		}
	}
	s.line = fmt.Sprintf("%-40s rows read %d ", cur, rows)
	s.final = fmt.Sprintf("%d stages, %d input rows", len(p.Stages), rows)
	if sl := p.Status.SegmentLoad; sl != nil {
		s.final += fmt.Sprintf(", %d segments (load %s)", sl.TotalSegments, sl.State)
	}
	if e := p.Status.ErrorReport; e != nil {
		s.errorText = fmt.Sprintf("[%s] %s", e.Error.ErrorCode, e.Error.ErrorMessage)
	}
	return s
}
