package sqlplan

import (
	"context"
	"strings"
	"testing"
)

// Functions lists what the planner plans and nothing it refuses: every
// listed function gets past the "not supported" check (an argument error is
// fine), and every aggregate name the planner knows but does not list is
// refused as unsupported.
func TestFunctionsAreThePlannedOnes(t *testing.T) {
	listed := map[string]bool{}
	keyword := map[string]bool{}
	for _, n := range keywordForms {
		keyword[n] = true
	}
	fns := Functions()
	if len(fns) < 50 {
		t.Fatalf("only %d functions listed", len(fns))
	}
	for _, f := range fns {
		listed[f.Name] = true
		if keyword[f.Name] {
			continue // not callable as NAME(args)
		}
		q := "SELECT " + f.Name + "(page) FROM wiki"
		_, err := Plan(context.Background(), q, Request{}, testCatalog{})
		if err != nil && (strings.Contains(err.Error(), "'"+f.Name+"' is not supported") ||
			strings.Contains(err.Error(), "Function '"+strings.ToLower(f.Name)+"' is not supported")) {
			t.Errorf("%s is listed but refused: %v", f.Name, err)
		}
		if f.Aggregator != aggregateNames[f.Name] {
			t.Errorf("%s listed with aggregator=%v, the planner says %v", f.Name, f.Aggregator, aggregateNames[f.Name])
		}
	}
	for n := range aggregateNames {
		if listed[n] {
			continue
		}
		_, err := Plan(context.Background(), "SELECT "+n+"(page) FROM wiki", Request{}, testCatalog{})
		if err == nil || !strings.Contains(err.Error(), "Aggregation '"+n+"' is not supported") {
			t.Errorf("%s is not listed but planned (%v): list it in plannedAggregates or aggBuilders", n, err)
		}
	}
	for _, n := range []string{"COUNT", "UPPER", "TIME_FLOOR", "CAST", "ARRAY_AGG", "PI", "BITWISE_AND", "IPV4_MATCH",
		"DECODE_BASE64_UTF8", "HUMAN_READABLE_BINARY_BYTE_FORMAT", "TIMESTAMPDIFF"} {
		if !listed[n] {
			t.Errorf("%s missing from Functions", n)
		}
	}
}
