package expr

import (
	"fmt"
	"math"
	"strings"
	"time"

	"strata/granularity"
	"strata/interval"
)

func init() {
	long := fixedType(TypeLong)
	register([]string{"timestamp"}, &funcDef{minArgs: 1, maxArgs: 2, outType: long, build: buildTimestamp(1)})
	register([]string{"unix_timestamp"}, &funcDef{minArgs: 1, maxArgs: 2, outType: long, build: buildTimestamp(1000)})
	register([]string{"timestamp_parse"}, &funcDef{minArgs: 1, maxArgs: 3, outType: long, build: buildTimestampParse})
	register([]string{"timestamp_format"}, &funcDef{minArgs: 1, maxArgs: 3, outType: fixedType(TypeString), build: buildTimestampFormat})
	register([]string{"timestamp_floor"}, &funcDef{minArgs: 2, maxArgs: 4, outType: long, build: buildTimestampRound(false)})
	register([]string{"timestamp_ceil"}, &funcDef{minArgs: 2, maxArgs: 4, outType: long, build: buildTimestampRound(true)})
	register([]string{"timestamp_shift"}, &funcDef{minArgs: 3, maxArgs: 4, outType: long, build: buildTimestampShift})
	register([]string{"timestamp_extract"}, &funcDef{minArgs: 2, maxArgs: 3, build: buildTimestampExtract,
		outType: func(args []node, _ []Type) Type {
			if s, _, ok := literalString(args[1]); ok {
				if u := strings.ToUpper(s); u == "CENTURY" || u == "MILLENNIUM" {
					return TypeDouble
				}
			}
			return TypeLong
		}})
}

// literalZone reads an optional literal time zone argument (null means UTC).
func literalZone(args []node, i int) (*time.Location, error) {
	if i >= len(args) {
		return time.UTC, nil
	}
	s, isNull, ok := literalString(args[i])
	if !ok {
		return nil, fmt.Errorf("time zone must be a literal")
	}
	if isNull {
		return time.UTC, nil
	}
	return interval.LoadZone(s)
}

// literalJoda reads an optional literal Joda pattern (nil when absent/null).
func literalJoda(args []node, i int) (*interval.JodaFormat, error) {
	if i >= len(args) {
		return nil, nil
	}
	s, isNull, ok := literalString(args[i])
	if !ok {
		return nil, fmt.Errorf("format must be a literal")
	}
	if isNull {
		return nil, nil
	}
	return interval.CompileJoda(s)
}

// millisOf reads a timestamp argument as epoch millis; ok is false for null
// and non-numeric values.
func millisOf(v Value) (int64, bool) {
	n := v.numeric()
	if !n.ok {
		return 0, false
	}
	return n.asLong(), true
}

// buildTimestamp is timestamp(str[, joda]) (div 1) and unix_timestamp (div
// 1000): the string is parsed as ISO date-optional-time in UTC, or with the
// Joda pattern; unparsable input is an error, as in Druid.
func buildTimestamp(div int64) func(*buildCtx, []node) (evalFunc, error) {
	return func(_ *buildCtx, args []node) (evalFunc, error) {
		var static *interval.JodaFormat
		if len(args) > 1 && isConst(args[1]) {
			f, err := literalJoda(args, 1)
			if err != nil {
				return nil, err
			}
			static = f
		}
		return optArgsFn(func(vals []Value) (Value, error) {
			v := vals[0]
			if v.Type() != TypeString {
				return Value{}, evalErrorf("first argument should be a STRING but got %s instead", v.Type())
			}
			s, ok := v.AsString()
			if !ok {
				return NullOf(TypeLong), nil
			}
			f := static
			if len(vals) > 1 && f == nil {
				if vals[1].Type() != TypeString || vals[1].IsNull() {
					return Value{}, evalErrorf("second argument should be STRING but got %s instead", vals[1].Type())
				}
				var err error
				if f, err = interval.CompileJoda(vals[1].str); err != nil {
					return Value{}, evalErrorf("%v", err)
				}
			}
			var ms int64
			var err error
			if f != nil {
				ms, err = f.ParseMillis(s, time.UTC)
			} else {
				ms, err = interval.ParseTime(s)
			}
			if err != nil {
				return Value{}, evalErrorf("invalid value %s", s)
			}
			return Long(ms / div), nil
		})(nil, args)
	}
}

// buildTimestampParse is timestamp_parse(str[, joda[, tz]]): without a
// pattern ISO-8601 or SQL ("2000-01-01 00:00:00") format; unparsable gives null.
func buildTimestampParse(_ *buildCtx, args []node) (evalFunc, error) {
	f, err := literalJoda(args, 1)
	if err != nil {
		return nil, err
	}
	loc, err := literalZone(args, 2)
	if err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		s, ok := v.AsString()
		if !ok {
			return NullOf(TypeLong), nil
		}
		var ms int64
		if f != nil {
			ms, err = f.ParseMillis(s, loc)
		} else {
			ms, err = interval.ParseTimeLenient(s, loc)
		}
		if err != nil {
			return NullOf(TypeLong), nil
		}
		return Long(ms), nil
	}, nil
}

// buildTimestampFormat is timestamp_format(t[, joda[, tz]]); without a
// pattern the ISO form with millis and offset.
func buildTimestampFormat(_ *buildCtx, args []node) (evalFunc, error) {
	f, err := literalJoda(args, 1)
	if err != nil {
		return nil, err
	}
	loc, err := literalZone(args, 2)
	if err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		ms, ok := millisOf(v)
		if !ok {
			return Null, nil
		}
		if f != nil {
			return String(f.FormatMillis(ms, loc)), nil
		}
		return String(interval.FormatMillisIn(ms, loc)), nil
	}, nil
}

// periodGranularity builds the granularity of timestamp_floor/ceil from the
// period, origin and time zone values.
func periodGranularity(period, origin, tz Value, hasOrigin, hasTZ bool) (granularity.Granularity, error) {
	ps, ok := period.AsString()
	if !ok {
		return nil, fmt.Errorf("invalid period [null]")
	}
	p, err := interval.ParsePeriod(ps)
	if err != nil {
		return nil, fmt.Errorf("invalid period [%s]: %v", ps, err)
	}
	var loc *time.Location
	if hasTZ {
		if s, ok := tz.AsString(); ok {
			if loc, err = interval.LoadZone(s); err != nil {
				return nil, err
			}
		}
	}
	var originMs int64
	withOrigin := false
	if hasOrigin && !origin.IsNull() {
		switch origin.Type() {
		case TypeLong, TypeDouble:
			originMs, withOrigin = origin.numeric().asLong(), true
		case TypeString:
			if origin.str != "" {
				zone := loc
				if zone == nil {
					zone = time.UTC
				}
				if originMs, err = interval.ParseTimeIn(origin.str, zone); err != nil {
					return nil, fmt.Errorf("invalid origin [%s]: %v", origin.str, err)
				}
				withOrigin = true
			}
		default:
			return nil, fmt.Errorf("invalid origin type %s", origin.Type())
		}
	}
	return granularity.NewPeriod(p, loc, originMs, withOrigin)
}

func granularityArgs(vals []Value) (granularity.Granularity, error) {
	var origin, tz Value
	if len(vals) > 2 {
		origin = vals[2]
	}
	if len(vals) > 3 {
		tz = vals[3]
	}
	return periodGranularity(vals[1], origin, tz, len(vals) > 2, len(vals) > 3)
}

func roundTime(g granularity.Granularity, ms int64, ceil bool) int64 {
	b := g.Bucket(ms)
	if ceil && b != ms {
		return g.Next(b)
	}
	return b
}

// buildTimestampRound is timestamp_floor / timestamp_ceil(t, period[,
// origin[, tz]]). Constant arguments are compiled once.
func buildTimestampRound(ceil bool) func(*buildCtx, []node) (evalFunc, error) {
	return func(_ *buildCtx, args []node) (evalFunc, error) {
		allConst := true
		for _, a := range args[1:] {
			allConst = allConst && isConst(a)
		}
		if allConst {
			vals := make([]Value, len(args))
			for i := 1; i < len(args); i++ {
				vals[i], _ = constValue(args[i])
			}
			g, err := granularityArgs(vals)
			if err != nil {
				return nil, err
			}
			return timeRounder{g: g, ceil: ceil}.eval, nil
		}
		return optArgsFn(func(vals []Value) (Value, error) {
			ms, ok := millisOf(vals[0])
			if !ok {
				return NullOf(TypeLong), nil
			}
			g, err := granularityArgs(vals)
			if err != nil {
				return Value{}, evalErrorf("%v", err)
			}
			return Long(roundTime(g, ms, ceil)), nil
		})(nil, args)
	}
}

// timeRounder is a timestamp_floor/ceil with a constant granularity; the
// vectorized path uses it directly.
type timeRounder struct {
	g    granularity.Granularity
	ceil bool
}

func (r timeRounder) eval(e env, args []node) (Value, error) {
	v, err := args[0].eval(e)
	if err != nil {
		return Value{}, err
	}
	ms, ok := millisOf(v)
	if !ok {
		return NullOf(TypeLong), nil
	}
	return Long(roundTime(r.g, ms, r.ceil)), nil
}

// buildTimestampShift is timestamp_shift(t, period, step[, tz]): the period
// added step times with calendar arithmetic in tz.
func buildTimestampShift(_ *buildCtx, args []node) (evalFunc, error) {
	var static *interval.Period
	if ps, isNull, ok := literalString(args[1]); ok && !isNull {
		p, err := interval.ParsePeriod(ps)
		if err != nil {
			return nil, fmt.Errorf("invalid period [%s]: %v", ps, err)
		}
		static = &p
	}
	loc, err := literalZone(args, 3)
	if err != nil {
		return nil, err
	}
	return optArgsFn(func(vals []Value) (Value, error) {
		ms, ok := millisOf(vals[0])
		if !ok {
			return NullOf(TypeLong), nil
		}
		p := static
		if p == nil {
			ps, ok := vals[1].AsString()
			if !ok {
				return Value{}, evalErrorf("invalid period [null]")
			}
			parsed, err := interval.ParsePeriod(ps)
			if err != nil {
				return Value{}, evalErrorf("invalid period [%s]: %v", ps, err)
			}
			p = &parsed
		}
		return Long(p.AddMillis(ms, int64(vals[2].asInt()), loc)), nil
	})(nil, args)
}

type extractUnit uint8

const (
	unitEpoch extractUnit = iota
	unitMicrosecond
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitDow
	unitIsoDow
	unitDoy
	unitWeek
	unitMonth
	unitQuarter
	unitYear
	unitIsoYear
	unitDecade
	unitCentury
	unitMillennium
)

var extractUnits = map[string]extractUnit{
	"EPOCH": unitEpoch, "MICROSECOND": unitMicrosecond, "MILLISECOND": unitMillisecond,
	"SECOND": unitSecond, "MINUTE": unitMinute, "HOUR": unitHour, "DAY": unitDay,
	"DOW": unitDow, "ISODOW": unitIsoDow, "DOY": unitDoy, "WEEK": unitWeek,
	"MONTH": unitMonth, "QUARTER": unitQuarter, "YEAR": unitYear, "ISOYEAR": unitIsoYear,
	"DECADE": unitDecade, "CENTURY": unitCentury, "MILLENNIUM": unitMillennium,
}

// buildTimestampExtract is timestamp_extract(t, unit[, tz]).
func buildTimestampExtract(_ *buildCtx, args []node) (evalFunc, error) {
	us, isNull, ok := literalString(args[1])
	if !ok || isNull {
		return nil, fmt.Errorf("unit arg must be a literal")
	}
	unit, ok := extractUnits[strings.ToUpper(us)]
	if !ok {
		return nil, fmt.Errorf("unknown unit [%s]", us)
	}
	loc, err := literalZone(args, 2)
	if err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		v, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		if v.IsNull() {
			return Null, nil
		}
		var ms int64
		switch v.Type() {
		case TypeString:
			// Joda's DateTime(Object) reads strings as ISO instants
			if ms, err = interval.ParseTimeIn(v.str, loc); err != nil {
				return Value{}, evalErrorf("invalid format: %q", v.str)
			}
		default:
			n := v.numeric()
			if !n.ok {
				return Null, nil
			}
			ms = n.asLong()
		}
		return extractField(unit, ms, loc), nil
	}, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

const dayMillis = 86400000

func extractField(unit extractUnit, ms int64, loc *time.Location) Value {
	local := ms + interval.OffsetMillis(loc, ms)
	year, month, day, tod := interval.SplitMillis(local)
	days := floorDiv(local, dayMillis)
	epoch := ms / 1000
	switch unit {
	case unitEpoch:
		return Long(epoch)
	case unitMicrosecond:
		return Long(epoch / 1000) // mirrors Druid
	case unitMillisecond:
		return Long(tod % 1000)
	case unitSecond:
		return Long(tod / 1000 % 60)
	case unitMinute:
		return Long(tod / 60000 % 60)
	case unitHour:
		return Long(tod / 3600000)
	case unitDay:
		return Long(int64(day))
	case unitDow, unitIsoDow:
		return Long(int64(interval.DayOfWeek(days)))
	case unitDoy:
		return Long(days - interval.DaysFromCivil(year, 1, 1) + 1)
	case unitWeek:
		_, w := isoWeek(days)
		return Long(w)
	case unitMonth:
		return Long(int64(month))
	case unitQuarter:
		return Long(int64((month-1)/3 + 1))
	case unitYear:
		return Long(year)
	case unitIsoYear:
		wy, _ := isoWeek(days)
		return Long(wy)
	case unitDecade:
		return Long(year / 10)
	case unitCentury:
		return Double(math.Ceil(float64(year) / 100))
	case unitMillennium:
		return Double(math.Ceil(float64(year) / 1000))
	}
	return Null
}

// isoWeek returns the ISO week-based year and week number of a day: the week
// belongs to the year of its Thursday.
func isoWeek(days int64) (weekYear, week int64) {
	thursday := days - int64(interval.DayOfWeek(days)) + 4
	wy, _, _ := interval.CivilFromDays(thursday)
	return wy, (thursday-interval.DaysFromCivil(wy, 1, 1))/7 + 1
}
