package interval

import (
	"fmt"
	"strings"
	"sync"
	"time"

	// Zones must resolve on hosts without a system tz database.
	_ "time/tzdata"
)

var zoneCache sync.Map // string -> *time.Location

// javaZoneAliases are the legacy Java ids Druid accepts through
// TimeZone.getTimeZone when Joda does not know them.
var javaZoneAliases = map[string]string{
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
	"CST": "America/Chicago", "CDT": "America/Chicago",
	"EDT": "America/New_York", "MDT": "America/Denver",
	"AST": "America/Anchorage", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
	"CTT": "Asia/Shanghai", "BST": "Asia/Dhaka", "ECT": "Europe/Paris",
	"AET": "Australia/Sydney", "ACT": "Australia/Darwin", "NST": "Pacific/Auckland",
	"PNT": "America/Phoenix", "IET": "America/Indiana/Indianapolis",
	"Z": "UTC", "GMT": "UTC", "UT": "UTC", "Etc/UTC": "UTC",
}

// LoadZone resolves a time zone id as Druid does: "UTC", IANA names
// ("America/Los_Angeles"), fixed offsets ("+05:30", "-08", "UTC+3"), and
// a few legacy Java ids ("PST"). Results are cached.
func LoadZone(id string) (*time.Location, error) {
	if id == "" {
		return nil, fmt.Errorf("empty time zone id")
	}
	if z, ok := zoneCache.Load(id); ok {
		return z.(*time.Location), nil
	}
	z, err := loadZone(id)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(id, z)
	return z, nil
}

func loadZone(id string) (*time.Location, error) {
	if id == "UTC" {
		return time.UTC, nil
	}
	if alias, ok := javaZoneAliases[id]; ok {
		if alias == "UTC" {
			return time.UTC, nil
		}
		id = alias
	}
	rest := id
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if strings.HasPrefix(rest, p) && len(rest) > len(p) && (rest[len(p)] == '+' || rest[len(p)] == '-') {
			rest = rest[len(p):]
			break
		}
	}
	if rest[0] == '+' || rest[0] == '-' {
		sc := &isoScanner{s: rest}
		off, err := sc.offset()
		if err != nil || sc.pos != len(rest) {
			return nil, fmt.Errorf("unknown time zone id %q", id)
		}
		return FixedZone(off), nil
	}
	// Reject what LoadLocation would read from the host or treat specially.
	if id == "Local" || strings.Contains(id, "..") || strings.HasPrefix(id, "/") {
		return nil, fmt.Errorf("unknown time zone id %q", id)
	}
	loc, err := time.LoadLocation(id)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone id %q", id)
	}
	return loc, nil
}

// FixedZone returns a zone with a constant offset named like Joda's ids
// ("+05:30"); a zero offset is UTC.
func FixedZone(offsetMillis int64) *time.Location {
	if offsetMillis == 0 {
		return time.UTC
	}
	name := string(appendOffset(nil, offsetMillis, true, ""))
	return time.FixedZone(name, int(offsetMillis/msPerSecond))
}
