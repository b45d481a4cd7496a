package interval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseTimestampFormat returns a parser for a timestampSpec "format":
// "auto" (ISO string, with ' ' or 'T' separator, or a number of millis),
// "iso", "posix" (seconds), "millis", "micro", "nano", "ruby" (seconds,
// fraction ignored) or a Joda pattern (read in UTC). The parser accepts a
// string, float64, json.Number, int64 or int. Names are case-insensitive.
func ParseTimestampFormat(format string) (func(v any) (int64, error), error) {
	lower := strings.ToLower(format)
	switch lower {
	case "auto":
		return func(v any) (int64, error) {
			if n, ok, err := numericArg(v); ok || err != nil {
				if err != nil {
					return 0, err
				}
				return n.truncated(), nil
			}
			s, err := rawString(v)
			if err != nil {
				return 0, err
			}
			return parseAutoString(s)
		}, nil
	case "iso":
		return func(v any) (int64, error) {
			s, err := stringArg(v)
			if err != nil {
				return 0, err
			}
			return ParseTime(s)
		}, nil
	case "posix", "millis", "micro", "nano", "ruby":
		return func(v any) (int64, error) {
			n, ok, err := numericArg(v)
			if err != nil {
				return 0, err
			}
			if !ok {
				s, err := stringArg(v)
				if err != nil {
					return 0, err
				}
				if lower == "ruby" {
					f, err := strconv.ParseFloat(s, 64)
					if err != nil {
						return 0, fmt.Errorf("unparseable ruby timestamp %q", s)
					}
					n = number{f: f, isFloat: true}
				} else {
					i, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return 0, fmt.Errorf("unparseable %s timestamp %q", lower, s)
					}
					n = number{i: i}
				}
			}
			switch lower {
			case "ruby":
				// Seconds with a fraction: Druid multiplies the double by 1000.
				f := n.f
				if !n.isFloat {
					f = float64(n.i)
				}
				return number{f: f * 1000, isFloat: true}.truncated(), nil
			case "posix":
				return satMul(n.truncated(), msPerSecond), nil
			case "micro":
				return n.truncated() / 1000, nil
			case "nano":
				return n.truncated() / 1000000, nil
			}
			return n.truncated(), nil
		}, nil
	}
	jf, err := CompileJoda(format)
	if err != nil {
		return nil, fmt.Errorf("invalid timestamp format %q: %w", format, err)
	}
	return func(v any) (int64, error) {
		s, err := stringArg(v)
		if err != nil {
			return 0, err
		}
		return jf.ParseMillis(s, time.UTC)
	}, nil
}

type number struct {
	i       int64
	f       float64
	isFloat bool
}

// truncated converts like Java's Number.longValue (toward zero, saturating).
func (n number) truncated() int64 {
	if !n.isFloat {
		return n.i
	}
	switch {
	case math.IsNaN(n.f):
		return 0
	case n.f >= math.MaxInt64:
		return math.MaxInt64
	case n.f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(n.f)
}

var errNullTimestamp = errors.New("null timestamp")

// numericArg reports whether v is a JSON number and returns it.
func numericArg(v any) (number, bool, error) {
	switch x := v.(type) {
	case nil:
		return number{}, false, errNullTimestamp
	case float64:
		return number{f: x, isFloat: true}, true, nil
	case float32:
		return number{f: float64(x), isFloat: true}, true, nil
	case int64:
		return number{i: x}, true, nil
	case int:
		return number{i: int64(x)}, true, nil
	case int32:
		return number{i: int64(x)}, true, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return number{i: i}, true, nil
		}
		f, err := x.Float64()
		if err != nil {
			return number{}, false, fmt.Errorf("invalid number %q", string(x))
		}
		return number{f: f, isFloat: true}, true, nil
	}
	return number{}, false, nil
}

// rawString renders v as Druid does before string parsing (Object.toString).
func rawString(v any) (string, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return "", errNullTimestamp
	case string:
		s = x
	case []byte:
		s = string(x)
	case json.Number:
		s = string(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		s = strconv.FormatInt(x, 10)
	case int:
		s = strconv.Itoa(x)
	default:
		return "", fmt.Errorf("unsupported timestamp value of type %T", v)
	}
	if s == "" {
		return "", errNullTimestamp
	}
	return s, nil
}

// stringArg is rawString followed by Druid's stripQuotes: trim, drop one
// pair of surrounding double quotes, trim again.
func stringArg(v any) (string, error) {
	s, err := rawString(v)
	if err != nil {
		return "", err
	}
	return stripQuotes(s)
}

func stripQuotes(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	if s == "" {
		return "", errNullTimestamp
	}
	return s, nil
}

// parseAutoString implements the string half of "auto": all digits means
// millis; anything else is an ISO date with an optional 'T' or ' ' and
// time, optionally followed by a space and a zone id. As in Druid, that
// zone id is stripped but does not change the instant: the text is read
// as UTC unless it carries an offset.
func parseAutoString(s string) (int64, error) {
	allDigits := true
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			allDigits = false
			break
		}
	}
	if allDigits {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unparseable timestamp %q", s)
		}
		return v, nil
	}
	s, err := stripQuotes(s)
	if err != nil {
		return 0, err
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		if name := s[i+1:]; isZoneName(name) {
			if _, err := LoadZone(name); err == nil {
				s = s[:i]
			}
		}
	}
	return ParseTimeLenient(s, time.UTC)
}

// isZoneName keeps a trailing time of day ("01:02:33") from being taken as
// an offset zone in "2013-08-31 01:02:33".
func isZoneName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			return true
		}
	}
	return false
}
