package streaming

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
	"strata/interval"
)

// withIO is specBody with extra ioConfig fields.
func withIO(extra string) []byte {
	return []byte(strings.Replace(specBody, `"taskDuration":"PT10M"`, `"taskDuration":"PT10M",`+extra, 1))
}

func ioField(t *testing.T, s *SupervisorSpec, name string) any {
	t.Helper()
	var n struct {
		IOConfig map[string]any `json:"ioConfig"`
		Spec     struct {
			IOConfig map[string]any `json:"ioConfig"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(s.Normalized, &n); err != nil {
		t.Fatal(err)
	}
	v, ok := n.IOConfig[name]
	if !ok || v != n.Spec.IOConfig[name] {
		t.Fatalf("ioConfig.%s: %v in the top-level ioConfig, %v in spec.ioConfig", name, v, n.Spec.IOConfig[name])
	}
	return v
}

func TestParseMessageRejection(t *testing.T) {
	created := time.Date(2016, 1, 1, 12, 0, 0, 0, time.UTC)
	ms := func(s string) int64 {
		v, err := interval.ParseTime(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// Unset: echoed as null, no bounds.
	s, err := ParseSupervisorSpec([]byte(specBody))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lateMessageRejectionPeriod", "earlyMessageRejectionPeriod", "lateMessageRejectionStartDateTime"} {
		if v := ioField(t, s, name); v != nil {
			t.Fatalf("%s = %v, want null", name, v)
		}
	}
	if m := s.MessageTimes(created); m.HasMin || m.HasMax {
		t.Fatalf("bounds without settings: %+v", m)
	}

	// Periods: Druid's examples (late PT1H: rows before 11:00 dropped; early
	// PT1H with taskDuration PT10M here: rows after 13:10 dropped).
	s, err = ParseSupervisorSpec(withIO(`"lateMessageRejectionPeriod":"PT1H","earlyMessageRejectionPeriod":"P1D"`))
	if err != nil {
		t.Fatal(err)
	}
	if *s.LateMessageRejectionPeriod != time.Hour || *s.EarlyMessageRejectionPeriod != 24*time.Hour || s.LateMessageRejectionStartDateTime != nil {
		t.Fatalf("parsed %+v", s)
	}
	if ioField(t, s, "lateMessageRejectionPeriod") != "PT3600S" || ioField(t, s, "earlyMessageRejectionPeriod") != "PT86400S" ||
		ioField(t, s, "lateMessageRejectionStartDateTime") != nil {
		t.Fatalf("normalized %s", s.Normalized)
	}
	m := s.MessageTimes(created)
	if !m.HasMin || m.Min != ms("2016-01-01T11:00Z") || !m.HasMax || m.Max != ms("2016-01-02T12:10Z") {
		t.Fatalf("bounds %+v", m)
	}
	if again, err := ParseSupervisorSpec(s.Normalized); err != nil || !bytes.Equal(again.Normalized, s.Normalized) {
		t.Fatalf("round trip: %v\n%s\n%s", err, s.Normalized, again.Normalized)
	}
	// PT0S is a period too: nothing older than the group's creation.
	if z, err := ParseSupervisorSpec(withIO(`"lateMessageRejectionPeriod":"PT0S"`)); err != nil || z.MessageTimes(created).Min != created.UnixMilli() {
		t.Fatalf("PT0S: %v", err)
	}

	// A start date time: fixed, whenever the group is created; offsets are
	// normalized to UTC.
	s, err = ParseSupervisorSpec(withIO(`"lateMessageRejectionStartDateTime":"2016-01-01T13:00+02:00"`))
	if err != nil {
		t.Fatal(err)
	}
	if ioField(t, s, "lateMessageRejectionStartDateTime") != "2016-01-01T11:00:00.000Z" {
		t.Fatalf("normalized %s", s.Normalized)
	}
	for _, at := range []time.Time{created, created.Add(48 * time.Hour)} {
		if m := s.MessageTimes(at); !m.HasMin || m.Min != ms("2016-01-01T11:00Z") || m.HasMax {
			t.Fatalf("bounds at %v: %+v", at, m)
		}
	}
	if again, err := ParseSupervisorSpec(s.Normalized); err != nil || !bytes.Equal(again.Normalized, s.Normalized) {
		t.Fatalf("round trip: %v", err)
	}

	for extra, want := range map[string]string{
		`"lateMessageRejectionPeriod":"PT1H","lateMessageRejectionStartDateTime":"2016-01-01T11:00Z"`: "both properties lateMessageRejectionStartDateTime and lateMessageRejectionPeriod",
		`"lateMessageRejectionPeriod":"P1M"`:                   "lateMessageRejectionPeriod",
		`"lateMessageRejectionPeriod":"an hour"`:               "lateMessageRejectionPeriod",
		`"lateMessageRejectionPeriod":3600`:                    "lateMessageRejectionPeriod must be an ISO 8601 period",
		`"earlyMessageRejectionPeriod":"PT-1H"`:                "earlyMessageRejectionPeriod: period \"PT-1H\" must not be negative",
		`"earlyMessageRejectionPeriod":"P1Y"`:                  "earlyMessageRejectionPeriod",
		`"lateMessageRejectionStartDateTime":"yesterday"`:      "lateMessageRejectionStartDateTime",
		`"lateMessageRejectionStartDateTime":{"at":"2016"}`:    "lateMessageRejectionStartDateTime",
		`"lateMessageRejectionStartDateTime":"2016-13-01T00Z"`: "lateMessageRejectionStartDateTime",
	} {
		if _, err := ParseSupervisorSpec(withIO(extra)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", extra, err, want)
		}
	}
}

func TestMessageTimesRestrict(t *testing.T) {
	day := interval.Interval{Start: 0, End: 86_400_000}
	none := MessageTimes{}
	if got := none.restrict(nil); got != nil {
		t.Fatalf("unbounded: %v", got)
	}
	both := MessageTimes{Min: 1000, Max: 2000, HasMin: true, HasMax: true}
	// Max is inclusive: the interval ends 1 ms after it.
	if got := both.restrict(nil); len(got) != 1 || got[0] != (interval.Interval{Start: 1000, End: 2001}) {
		t.Fatalf("bounds alone: %v", got)
	}
	// Narrowed within granularitySpec.intervals; an interval left empty goes.
	got := both.restrict([]interval.Interval{{Start: 0, End: 1500}, {Start: 5000, End: 6000}})
	if len(got) != 1 || got[0] != (interval.Interval{Start: 1000, End: 1500}) {
		t.Fatalf("intersected: %v", got)
	}
	// Nothing left: one empty interval, which keeps no row (an empty list would keep all).
	got = both.restrict([]interval.Interval{{Start: 5000, End: 6000}})
	if len(got) != 1 || !got[0].IsEmpty() {
		t.Fatalf("disjoint: %v", got)
	}
	if got := (MessageTimes{Min: 500, HasMin: true}).restrict([]interval.Interval{day}); len(got) != 1 || got[0] != (interval.Interval{Start: 500, End: day.End}) {
		t.Fatalf("min only: %v", got)
	}
	if got := (MessageTimes{Max: 500, HasMax: true}).restrict(nil); len(got) != 1 || got[0] != (interval.Interval{Start: interval.MinInstant, End: 501}) {
		t.Fatalf("max only: %v", got)
	}

	// The task ioConfig fields: ISO strings or ms, null = unbounded.
	m, err := parseMessageTimes(json.RawMessage(`"1970-01-01T00:00:01Z"`), json.RawMessage(`2000`))
	if err != nil || m != both {
		t.Fatalf("parse: %+v %v", m, err)
	}
	if m, err := parseMessageTimes(json.RawMessage(`null`), nil); err != nil || m.HasMin || m.HasMax {
		t.Fatalf("null: %+v %v", m, err)
	}
	if _, err := parseMessageTimes(json.RawMessage(`"soon"`), nil); err == nil || !strings.Contains(err.Error(), "minimumMessageTime") {
		t.Fatalf("bad time: %v", err)
	}
	if lo, hi := both.payload(); *lo != "1970-01-01T00:00:01.000Z" || *hi != "1970-01-01T00:00:02.000Z" {
		t.Fatalf("payload %s %s", *lo, *hi)
	}
}

// payloadTimes reads the bounds a submitted task got, through the task's
// own parser (the contract between supervisor and task).
func payloadTimes(t *testing.T, p supTaskPayload) MessageTimes {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	k, err := parseTask(b)
	if err != nil {
		t.Fatalf("the task does not parse its payload: %v\n%s", err, b)
	}
	return k.times
}

// The supervisor fixes a task group's bounds when it creates the group; a
// task that failed while reading is retried with the same bounds (also by a
// new leader that adopted it), and the group after a publish gets bounds
// computed for its own creation.
func TestSupervisorMessageTimes(t *testing.T) {
	_, addr := supCluster(t, 1, "t")
	c := newSupTestControl(t)
	_, stop := runManager(t, c)
	body := strings.Replace(string(supSpecJSON("wiki", "t", supSpecOpts{bootstrap: addr, taskCount: 1, earliest: true})),
		`"taskDuration":"PT1H"`, `"taskDuration":"PT1H","lateMessageRejectionPeriod":"PT2H","earlyMessageRejectionPeriod":"PT30M"`, 1)
	before := time.Now().UnixMilli()
	c.setSpec(t, []byte(body), false)
	eventually.True(t, "a task", func() bool { return len(c.tasks()) == 1 })
	after := time.Now().UnixMilli()
	first := c.tasks()[0]
	m := payloadTimes(t, first)
	const hour = int64(time.Hour / time.Millisecond)
	if !m.HasMin || !m.HasMax || m.Max-m.Min != 2*hour+hour+hour/2 || m.Min < before-2*hour || m.Min > after-2*hour {
		t.Fatalf("first group's bounds %+v (created within [%d, %d])", m, before, after)
	}
	if *first.IOConfig.MinimumMessageTime != interval.FormatMillis(m.Min) {
		t.Fatalf("minimumMessageTime %q", *first.IOConfig.MinimumMessageTime)
	}

	// Failed while reading: the retry has the same bounds.
	c.start(first.ID)
	c.finish("wiki", "t", first.ID, nil)
	eventually.True(t, "the retry", func() bool { return len(c.tasks()) == 2 })
	retry := c.tasks()[1]
	if got := payloadTimes(t, retry); got != m {
		t.Fatalf("retry bounds %+v, want the group's %+v", got, m)
	}

	// A new leader adopts the running retry, and its group keeps its bounds.
	c.start(retry.ID)
	stop()
	m2, _ := runManager(t, c)
	eventually.True(t, "adopted", func() bool {
		st, ok := m2.Status("wiki")
		var rep supStatusView
		return ok && json.Unmarshal(st.Payload, &rep) == nil && len(rep.ActiveTasks) == 1 && rep.ActiveTasks[0].ID == retry.ID
	})
	c.finish("wiki", "t", retry.ID, nil)
	eventually.True(t, "the retry of the adopted task", func() bool { return len(c.tasks()) == 3 })
	if got := payloadTimes(t, c.tasks()[2]); got != m {
		t.Fatalf("bounds after adoption %+v, want %+v", got, m)
	}

	// Published: the next group's bounds are computed anew.
	third := c.tasks()[2].ID
	c.start(third)
	time.Sleep(5 * time.Millisecond) // a later clock reading
	c.finish("wiki", "t", third, map[int32]int64{0: 4})
	eventually.True(t, "the next group", func() bool { return len(c.tasks()) == 4 })
	next := payloadTimes(t, c.tasks()[3])
	if next.Min <= m.Min || next.Max-next.Min != m.Max-m.Min {
		t.Fatalf("next group's bounds %+v, first %+v", next, m)
	}
}
