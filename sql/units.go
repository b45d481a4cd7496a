package sql

import "strings"

// TimeUnit is a time unit keyword as used by FLOOR/CEIL(x TO unit), EXTRACT, TIMESTAMPADD,
// TIMESTAMPDIFF, INTERVAL literals and PARTITIONED BY.
type TimeUnit uint8

const (
	UnitNone TimeUnit = iota
	UnitNanosecond
	UnitMicrosecond
	UnitMillisecond
	UnitSecond
	UnitMinute
	UnitHour
	UnitDay
	UnitWeek
	UnitMonth
	UnitQuarter
	UnitYear
	UnitDecade
	UnitCentury
	UnitMillennium
	UnitEpoch
	UnitDOW
	UnitDOY
	UnitISODOW
	UnitISOYear
	unitCount
)

var unitNames = [unitCount]string{
	UnitNanosecond: "NANOSECOND", UnitMicrosecond: "MICROSECOND", UnitMillisecond: "MILLISECOND",
	UnitSecond: "SECOND", UnitMinute: "MINUTE", UnitHour: "HOUR", UnitDay: "DAY", UnitWeek: "WEEK",
	UnitMonth: "MONTH", UnitQuarter: "QUARTER", UnitYear: "YEAR", UnitDecade: "DECADE",
	UnitCentury: "CENTURY", UnitMillennium: "MILLENNIUM", UnitEpoch: "EPOCH", UnitDOW: "DOW",
	UnitDOY: "DOY", UnitISODOW: "ISODOW", UnitISOYear: "ISOYEAR",
}

func (u TimeUnit) String() string {
	if u < unitCount {
		return unitNames[u]
	}
	return ""
}

// Period returns the ISO-8601 period of one unit ("P1D" for DAY), or "" if the unit has none.
func (u TimeUnit) Period() string {
	switch u {
	case UnitMillisecond:
		return "PT0.001S"
	case UnitSecond:
		return "PT1S"
	case UnitMinute:
		return "PT1M"
	case UnitHour:
		return "PT1H"
	case UnitDay:
		return "P1D"
	case UnitWeek:
		return "P1W"
	case UnitMonth:
		return "P1M"
	case UnitQuarter:
		return "P3M"
	case UnitYear:
		return "P1Y"
	case UnitDecade:
		return "P10Y"
	case UnitCentury:
		return "P100Y"
	case UnitMillennium:
		return "P1000Y"
	}
	return ""
}

// parseTimeUnit maps a word to a unit, ignoring case. TIMESTAMPADD's SQL_TSI_ spellings
// (SQL_TSI_DAY) and a few aliases are accepted.
func parseTimeUnit(word string) TimeUnit {
	w := strings.ToUpper(word)
	w = strings.TrimPrefix(w, "SQL_TSI_")
	switch w {
	case "DAYOFWEEK":
		return UnitDOW
	case "DAYOFYEAR":
		return UnitDOY
	case "FRAC_SECOND":
		return UnitMicrosecond
	}
	for u := UnitNanosecond; u < unitCount; u++ {
		if unitNames[u] == w {
			return u
		}
	}
	return UnitNone
}

// partitionPeriods maps every granularity PARTITIONED BY accepts, by name or ISO period, to its
// ISO period ("" for ALL). Druid rejects anything else.
var partitionPeriods = map[string]string{
	"PT1S": "PT1S", "PT1M": "PT1M", "PT5M": "PT5M", "PT10M": "PT10M", "PT15M": "PT15M", "PT30M": "PT30M",
	"PT1H": "PT1H", "PT6H": "PT6H", "P1D": "P1D", "P1W": "P1W", "P1M": "P1M", "P3M": "P3M", "P1Y": "P1Y",
	"SECOND": "PT1S", "MINUTE": "PT1M", "FIVE_MINUTE": "PT5M", "TEN_MINUTE": "PT10M",
	"FIFTEEN_MINUTE": "PT15M", "THIRTY_MINUTE": "PT30M", "HOUR": "PT1H", "SIX_HOUR": "PT6H",
	"DAY": "P1D", "WEEK": "P1W", "MONTH": "P1M", "QUARTER": "P3M", "YEAR": "P1Y", "ALL": "",
}

// supportedPartitionPeriods lists, in increasing size, the ISO periods PARTITIONED BY accepts.
var supportedPartitionPeriods = []string{
	"PT1S", "PT1M", "PT5M", "PT10M", "PT15M", "PT30M", "PT1H", "PT6H", "P1D", "P1W", "P1M", "P3M", "P1Y",
}
