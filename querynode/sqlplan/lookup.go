package sqlplan

import (
	"strings"

	"strata/sql"
)

// lookupCall plans LOOKUP(expr, 'lookupName'[, 'replaceMissingValueWith'])
// onto the native lookup() expression function, which each querying
// process resolves against the lookups of its tier. The lookup name and the
// replacement must be literals, as in Druid; a name no process holds is
// refused when the native query is parsed ("Lookup [x] not found", 400).
func (t *translator) lookupCall(x *sql.FuncCall, args []ex, at sql.Node) (ex, error) {
	if len(args) < 2 || len(args) > 3 {
		return ex{}, invalid("%s", sql.AtPos(at, "Invalid number of arguments to function 'LOOKUP'"))
	}
	name, ok := x.Args[1].(*sql.StringLit)
	if !ok {
		return ex{}, invalid("%s", sql.AtPos(at, "LOOKUP's lookup name must be a string literal"))
	}
	if strings.TrimSpace(name.Value) == "" {
		return ex{}, invalid("%s", sql.AtPos(at, "LOOKUP's lookup name must not be empty"))
	}
	src := "lookup(" + args[0].src + ", " + quoteString(name.Value)
	if len(args) == 3 {
		switch r := x.Args[2].(type) {
		case *sql.StringLit:
			src += ", " + quoteString(r.Value)
		case *sql.NullLit:
		default:
			return ex{}, invalid("%s", sql.AtPos(at, "LOOKUP's replaceMissingValueWith must be a string literal"))
		}
	}
	return ex{src: src + ")", typ: tVarchar}, nil
}
