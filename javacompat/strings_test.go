package javacompat

import (
	"fmt"
	"testing"
)

func TestStringLength(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"aé€", 3},
		{"😀", 2}, // a surrogate pair
		{"a😀b", 4},
		{"\xff", 1}, // an invalid byte decodes to U+FFFD, one unit
		{"\u2028", 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.in), func(t *testing.T) {
			if got := StringLength(c.in); got != c.want {
				t.Errorf("StringLength(%q) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}
