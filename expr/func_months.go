package expr

import "time"

func init() {
	register([]string{"subtract_months"}, &funcDef{minArgs: 2, maxArgs: 3, outType: fixedType(TypeLong), build: buildSubtractMonths})
}

// buildSubtractMonths is Druid's subtract_months(a, b[, tz]): the whole
// calendar months from b to a in tz, which SQL's TIMESTAMPDIFF in MONTH,
// QUARTER and YEAR divides.
func buildSubtractMonths(_ *buildCtx, args []node) (evalFunc, error) {
	loc, err := literalZone(args, 2)
	if err != nil {
		return nil, err
	}
	return func(e env, args []node) (Value, error) {
		a, err := args[0].eval(e)
		if err != nil {
			return Value{}, err
		}
		b, err := args[1].eval(e)
		if err != nil {
			return Value{}, err
		}
		am, aok := millisOf(a)
		bm, bok := millisOf(b)
		if !aok || !bok {
			return NullOf(TypeLong), nil
		}
		return Long(monthsBetween(bm, am, loc)), nil
	}, nil
}

// monthsBetween is Joda's Months.monthsBetween(from, to): the month number
// difference of the local dates, less one when to's offset into its month
// (day and time) is short of from's. A from day beyond the end of to's
// month counts as to's last day, so Jan 31 to Feb 28 is one month.
func monthsBetween(from, to int64, loc *time.Location) int64 {
	if to < from {
		return -monthsBetween(to, from, loc)
	}
	f, t := wallClock(from, loc), wallClock(to, loc)
	diff := int64(t.Year()-f.Year())*12 + int64(t.Month()) - int64(f.Month())
	fromDay := f.Day()
	if last := daysIn(t.Year(), t.Month()); t.Day() == last && fromDay > last {
		fromDay = last
	}
	offset := func(x time.Time, day int) time.Duration {
		return time.Duration(day-1)*24*time.Hour + x.Sub(time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC))
	}
	if offset(t, t.Day()) < offset(f, fromDay) {
		diff--
	}
	return diff
}

// wallClock is the local date and time of ms in loc, as a UTC time, so
// that calendar arithmetic ignores offset changes.
func wallClock(ms int64, loc *time.Location) time.Time {
	l := time.UnixMilli(ms).In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }
