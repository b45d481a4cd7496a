package main

// The .iq reader: Druid's quidem test scripts (MANIFEST.md of
// ../shared/conformance/druid-sql, "How to read an .iq file") as statements
// with their context, expectation and expected boxed table.

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// iqFile is one parsed quidem script.
type iqFile struct {
	Path       string // relative to the corpus's cases/ folder
	Dataset    string // data/<Dataset> holds ingest.json and rows.*
	Statements []iqStatement
}

// iqStatement is one SQL statement and what Druid expects of it.
type iqStatement struct {
	Line    int            // line of the statement's first SQL line
	SQL     string         // without the terminating ';'
	Context map[string]any // the !set settings in force
	Error   bool           // !error: the statement must fail
	// ErrorHint is the fragment Druid finds in its exception: a hint only.
	ErrorHint  string
	Expected   *boxTable // for !ok
	NativePlan string    // the !nativePlan block after the !ok, if any
}

// nonContextSettings are !set keys that configure Quidem, not the query.
var nonContextSettings = map[string]bool{"outputformat": true, "dartQueryId": true}

var datasetParam = regexp.MustCompile(`[?&]datasets=([^&\s]+)`)

// datasetDir maps a !use line's datasets= value to the corpus's data folder.
func datasetDir(v string) string {
	const qa = "sql/src/test/quidem/qatests/"
	if rest, ok := strings.CutPrefix(v, qa); ok {
		return strings.TrimRight(rest, "/")
	}
	if v == "sql/src/test/quidem/sampledataset" {
		return "sampledataset"
	}
	return v
}

// parseIQFile reads one .iq script.
func parseIQFile(path, rel string) (*iqFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := parseIQ(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	f.Path = rel
	return f, nil
}

// parseIQ parses a script's text. SQL accumulates until a line ends with
// ';'; the lines after it up to !ok / !error are its expectation; a block
// ending in !nativePlan belongs to the statement before it.
func parseIQ(text string) (*iqFile, error) {
	f := &iqFile{}
	ctx := map[string]any{}
	var sql []string // current statement's lines
	sqlLine := 0
	var block []string // lines after a terminated statement, or a plan block
	blockLine := 0
	var pending *iqStatement // terminated statement awaiting !ok / !error
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if pending != nil {
			switch line {
			case "!ok":
				t, err := parseBoxTable(block)
				if err != nil {
					return nil, fmt.Errorf("line %d: expected table: %w", blockLine, err)
				}
				pending.Expected = t
				f.Statements = append(f.Statements, *pending)
				pending, block = nil, nil
			case "!error":
				pending.Error = true
				pending.ErrorHint = strings.TrimSpace(strings.Join(block, "\n"))
				f.Statements = append(f.Statements, *pending)
				pending, block = nil, nil
			case "!nativePlan":
				return nil, fmt.Errorf("line %d: !nativePlan before the statement's !ok", n)
			default:
				if len(block) == 0 {
					blockLine = n
				}
				block = append(block, line)
			}
			continue
		}
		if len(sql) == 0 {
			trimmed := strings.TrimSpace(line)
			switch {
			case line == "!nativePlan":
				if len(f.Statements) == 0 || f.Statements[len(f.Statements)-1].Error {
					return nil, fmt.Errorf("line %d: !nativePlan without a preceding !ok", n)
				}
				f.Statements[len(f.Statements)-1].NativePlan = strings.Join(block, "\n")
				block = nil
				continue
			case len(block) > 0 || strings.HasPrefix(trimmed, "{"):
				// A plan block (JSON) runs up to its !nativePlan line.
				block = append(block, line)
				continue
			case trimmed == "" || strings.HasPrefix(trimmed, "#"):
				continue
			case strings.HasPrefix(line, "!set "):
				fields := strings.Fields(line)
				if len(fields) < 3 {
					return nil, fmt.Errorf("line %d: malformed !set", n)
				}
				key, val := fields[1], strings.Join(fields[2:], " ")
				if !nonContextSettings[key] {
					ctx = withSetting(ctx, key, val)
				}
				continue
			case strings.HasPrefix(line, "!use "):
				m := datasetParam.FindStringSubmatch(line)
				if m == nil {
					return nil, fmt.Errorf("line %d: !use without datasets=", n)
				}
				f.Dataset = datasetDir(m[1])
				continue
			case strings.HasPrefix(line, "!"):
				return nil, fmt.Errorf("line %d: unsupported directive %q", n, line)
			}
			sqlLine = n
		}
		sql = append(sql, line)
		if strings.HasSuffix(strings.TrimRight(line, " \t"), ";") {
			text := strings.TrimSpace(strings.Join(sql, "\n"))
			text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
			pending = &iqStatement{Line: sqlLine, SQL: text, Context: ctx}
			sql, block = nil, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if pending != nil || len(sql) > 0 {
		return nil, fmt.Errorf("statement at line %d has no !ok or !error", sqlLine)
	}
	if len(block) > 0 {
		return nil, fmt.Errorf("plan block at line %d has no !nativePlan", blockLine)
	}
	if f.Dataset == "" {
		return nil, fmt.Errorf("no !use line names a dataset")
	}
	return f, nil
}

// withSetting returns a copy of ctx with key set: statements keep the
// context they were read under.
func withSetting(ctx map[string]any, key, val string) map[string]any {
	out := make(map[string]any, len(ctx)+1)
	for k, v := range ctx {
		out[k] = v
	}
	switch {
	case val == "true" || val == "false":
		out[key] = val == "true"
	default:
		if i, err := strconv.ParseInt(val, 10, 64); err == nil {
			out[key] = i
		} else {
			out[key] = val
		}
	}
	return out
}

// orderMatters is Quidem's rule: rows compare in order only when the last
// ORDER BY of the statement is at top level, i.e. the text after it does not
// close more parentheses than it opens.
func orderMatters(sql string) bool {
	up := strings.ToUpper(sql)
	i := strings.LastIndex(up, "ORDER BY")
	if i < 0 {
		return false
	}
	rest := up[i:]
	return strings.Count(rest, "(") >= strings.Count(rest, ")")
}
