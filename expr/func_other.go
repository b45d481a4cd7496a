package expr

import (
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
)

func init() {
	str := fixedType(TypeString)
	register([]string{"human_readable_binary_byte_format"}, &funcDef{minArgs: 1, maxArgs: 2, outType: str, build: humanReadable(binaryBytes)})
	register([]string{"human_readable_decimal_byte_format"}, &funcDef{minArgs: 1, maxArgs: 2, outType: str, build: humanReadable(decimalBytes)})
	register([]string{"human_readable_decimal_format"}, &funcDef{minArgs: 1, maxArgs: 2, outType: str, build: humanReadable(decimalPlain)})
	register([]string{"ipv4_match"}, &funcDef{minArgs: 2, maxArgs: 2, outType: fixedType(TypeLong), build: buildIPMatch(true)})
	register([]string{"ipv6_match"}, &funcDef{minArgs: 2, maxArgs: 2, outType: fixedType(TypeLong), build: buildIPMatch(false)})
	register([]string{"ipv4_parse"}, &funcDef{minArgs: 1, maxArgs: 1, outType: fixedType(TypeLong), build: unaryFn(func(v Value) (Value, error) {
		if ip, ok := ipv4Of(v); ok {
			return Long(int64(ip)), nil
		}
		return NullOf(TypeLong), nil
	})})
	register([]string{"ipv4_stringify"}, &funcDef{minArgs: 1, maxArgs: 1, outType: str, build: unaryFn(func(v Value) (Value, error) {
		ip, ok := ipv4Of(v)
		if !ok {
			return Null, nil
		}
		return String(fmt.Sprintf("%d.%d.%d.%d", ip>>24, ip>>16&255, ip>>8&255, ip&255)), nil
	})})
}

// --- human_readable_*_format --------------------------------------------------

type sizeUnits int

const (
	binaryBytes sizeUnits = iota
	decimalBytes
	decimalPlain
)

func humanReadable(units sizeUnits) func(*buildCtx, []node) (evalFunc, error) {
	return optArgsFn(func(vals []Value) (Value, error) {
		v := vals[0]
		if !v.numeric().ok {
			return Null, nil
		}
		if v.typ != TypeLong && v.typ != TypeDouble {
			return Value{}, evalErrorf("needs a number as its first argument but got %s instead", v.Type())
		}
		precision := int64(2)
		if len(vals) > 1 {
			if vals[1].Type() != TypeLong || vals[1].IsNull() {
				return Value{}, evalErrorf("needs a LONG as its second argument but got %s instead", vals[1].Type())
			}
			precision = vals[1].Long()
			if precision < 0 || precision > 3 {
				return Value{}, evalErrorf("given precision[%d] must be in the range of [0,3]", precision)
			}
		}
		return String(formatBytes(v.numeric().asLong(), int(precision), units)), nil
	})
}

// formatBytes is Druid's HumanReadableBytes.format.
func formatBytes(b int64, precision int, units sizeUnits) string {
	num := func(x float64) string { return formatFloat('f', "", precision, x) }
	if units == binaryBytes {
		if b > -1024 && b < 1024 {
			return strconv.FormatInt(b, 10) + " B"
		}
		names := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
		if b == -1<<63 {
			return num(-8) + " EiB"
		}
		abs := b
		if abs < 0 {
			abs = -abs
		}
		idx := (63 - bits.LeadingZeros64(uint64(abs))) / 10
		return num(float64(b)/float64(int64(1)<<(idx*10))) + " " + names[idx] + "B"
	}
	suffix := "B"
	if units == decimalPlain {
		suffix = ""
	}
	if b > -1000 && b < 1000 {
		return strings.TrimSpace(strconv.FormatInt(b, 10) + " " + suffix)
	}
	names := []string{"K", "M", "G", "T", "P", "E"}
	idx := 0
	for b <= -1000000 || b >= 1000000 {
		b /= 1000
		idx++
	}
	return strings.TrimSpace(num(float64(b)/1000.0) + " " + names[idx] + suffix)
}

// --- IP addresses ---------------------------------------------------------------

// ipv4Of reads an IPv4 address from a dotted-decimal string or from a long
// in [0, 2^32).
func ipv4Of(v Value) (uint32, bool) {
	switch v.Type() {
	case TypeLong:
		if v.IsNull() {
			return 0, false
		}
		l := v.Long()
		if l < 0 || l > 0xFFFFFFFF {
			return 0, false
		}
		return uint32(l), true
	case TypeString:
		if v.IsNull() {
			return 0, false
		}
		a, err := netip.ParseAddr(v.str)
		if err != nil || !a.Is4() {
			return 0, false
		}
		b := a.As4()
		return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), true
	}
	return 0, false
}

// buildIPMatch is ipv4_match / ipv6_match(address, 'subnet'): 1 when the
// address lies in the CIDR subnet literal, 0 otherwise (including invalid
// addresses).
func buildIPMatch(v4 bool) func(*buildCtx, []node) (evalFunc, error) {
	return func(_ *buildCtx, args []node) (evalFunc, error) {
		s, err := requireStringLiteral(args[1], "subnet")
		if err != nil {
			return nil, err
		}
		prefix, err := netip.ParsePrefix(s)
		if err != nil || prefix.Addr().Is4() != v4 {
			return nil, fmt.Errorf("subnet arg has an invalid format: %s", s)
		}
		prefix = prefix.Masked()
		return unaryFn(func(v Value) (Value, error) {
			if v4 {
				ip, ok := ipv4Of(v)
				if !ok {
					return Bool(false), nil
				}
				a := netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)})
				return Bool(prefix.Contains(a)), nil
			}
			s, ok := v.AsString()
			if !ok {
				return Bool(false), nil
			}
			a, err := netip.ParseAddr(s)
			if err != nil || !a.Is6() || a.Is4In6() {
				return Bool(false), nil
			}
			return Bool(prefix.Contains(a)), nil
		})(nil, args)
	}
}
