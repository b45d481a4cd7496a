package sql

import (
	"fmt"
	"strings"
)

// Error is a lexical or syntax error. Line and Column (both 1-based, columns counted in Unicode
// code points) locate the offending token; Offset is its byte offset in the source.
type Error struct {
	Line, Column, Offset int
	// Encountered is the offending token as written ("<EOF>" at the end of input); empty for
	// errors that are not about an unexpected token.
	Encountered string
	// Expected lists what would have been accepted at that point, when known.
	Expected []string
	// Msg is a free-form explanation.
	Msg string
	// Unsupported marks valid SQL this parser does not accept (a VALUES
	// list), so a caller can answer "not supported" rather than "invalid".
	Unsupported bool
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Encountered != "" {
		fmt.Fprintf(&b, "Encountered %s at line %d, column %d.", e.Encountered, e.Line, e.Column)
		if e.Msg != "" {
			b.WriteString(" ")
			b.WriteString(e.Msg)
		}
		switch len(e.Expected) {
		case 0:
		case 1:
			b.WriteString(" Was expecting " + e.Expected[0] + ".")
		default:
			b.WriteString(" Was expecting one of: " + strings.Join(e.Expected, ", ") + ".")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s at line %d, column %d", e.Msg, e.Line, e.Column)
	return b.String()
}

// AtPos appends a node's position to a message the way Druid's SQL errors
// give it: "msg (line [l], column [c])"; a node without a position adds none.
func AtPos(n Node, msg string) string {
	p := n.Position()
	if p.Line == 0 {
		return msg
	}
	return fmt.Sprintf("%s (line [%d], column [%d])", msg, p.Line, p.Column)
}
