package server

import "strings"

// Druid's tools (plywood, pydruid, Superset, Grafana's Druid plugin, Cube's
// driver) call Druid's paths, /druid/v2/... and so on, and Jersey, which
// serves Druid's API, takes every path with or without a trailing slash.
// Strata's own paths stay /svc/...: each route of the table answers under
// both, from the same entry (the same handler, Access and leadership), so
// an alias can neither drift from its route nor be left unguarded.

// druidPrefixes maps each of Strata's path prefixes to Druid's.
var druidPrefixes = [][2]string{
	{"/svc-internal/", "/druid-internal/"},
	{"/svc-ext/", "/druid-ext/"},
	{"/svc/", "/druid/"},
	{"/svc", "/druid"}, // the router's "/svc/v2" prefix ends without a slash
}

// DruidPath is p under Druid's prefix (/svc/v2/sql → /druid/v2/sql), or
// false for a path with no Druid alias (/status, /debug/pprof/).
func DruidPath(p string) (string, bool) {
	for _, pre := range druidPrefixes {
		if rest, ok := strings.CutPrefix(p, pre[0]); ok && (strings.HasSuffix(pre[0], "/") || rest == "" || rest[0] == '/') {
			return pre[1] + rest, true
		}
	}
	return "", false
}

// Paths are every path e answers: its own and its Druid alias, each with
// and without a trailing slash as Jersey takes them. A Prefix route
// (the profiler's index) is its path alone.
func (e Endpoint) Paths() []string {
	if e.Prefix {
		return []string{e.Path}
	}
	bases := []string{e.Path}
	if d, ok := DruidPath(e.Path); ok {
		bases = append(bases, d)
	}
	var out []string
	for _, p := range bases {
		other := p + "/"
		if strings.HasSuffix(p, "/") {
			other = strings.TrimSuffix(p, "/")
		}
		out = append(out, p)
		if other != "" { // the root, /, has no form without its slash
			out = append(out, other)
		}
	}
	return out
}
