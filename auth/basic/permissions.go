package basic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"strata/auth"
)

// Limits on a role's permission list, so that one request cannot make every
// node compile and hold an unbounded set of patterns.
const (
	MaxPermissions       = 1000
	MaxPatternLength     = 1024
	maxPermissionsLength = 1 << 20
)

// ParsePermissions reads the body of POST roles/{roleName}/permissions:
// Druid's JSON array of {"resource": {"type", "name"}, "action"}, with known
// resource types and actions and names that compile as regular expressions
// (matched against the whole resource name, as Java's Matcher.matches does).
// "null" or an empty body is the empty list, as in Druid.
func ParsePermissions(body []byte) ([]auth.Permission, error) {
	body = bytes.TrimSpace(body)
	if len(body) > maxPermissionsLength {
		return nil, fmt.Errorf("permission list is %d bytes long; the limit is %d", len(body), maxPermissionsLength)
	}
	if len(body) == 0 || string(body) == "null" {
		return []auth.Permission{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var perms []auth.Permission
	if err := dec.Decode(&perms); err != nil {
		return nil, fmt.Errorf("cannot parse the permission list (want a JSON array of {\"resource\":{\"type\":...,\"name\":...},\"action\":...}): %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("cannot parse the permission list: data after the array")
	}
	if perms == nil {
		perms = []auth.Permission{}
	}
	if _, err := compilePermissions(perms); err != nil {
		return nil, err
	}
	return perms, nil
}

// compilePermissions validates perms and compiles their name patterns.
func compilePermissions(perms []auth.Permission) ([]compiledPermission, error) {
	if len(perms) > MaxPermissions {
		return nil, fmt.Errorf("a role holds at most %d permissions, got %d", MaxPermissions, len(perms))
	}
	out := make([]compiledPermission, len(perms))
	for i, p := range perms {
		if !slices.Contains(auth.ResourceTypes, p.Resource.Type) {
			return nil, fmt.Errorf("permission %d: unknown resource type %q (one of %v)", i, p.Resource.Type, auth.ResourceTypes)
		}
		if p.Action != auth.Read && p.Action != auth.Write {
			return nil, fmt.Errorf("permission %d: unknown action %q (READ or WRITE)", i, p.Action)
		}
		re, err := CompilePattern(p.Resource.Name)
		if err != nil {
			return nil, fmt.Errorf("permission %d: %v", i, err)
		}
		out[i] = compiledPermission{typ: p.Resource.Type, action: p.Action, name: re}
	}
	return out, nil
}

// CompilePattern compiles a permission's resource name pattern so that it
// matches whole names only: Druid uses Java's Pattern.matcher(name).matches().
// Go's RE2 syntax differs from Java's at the edges (no backreferences or
// lookaround), and runs in linear time, so a pattern cannot stall a check.
func CompilePattern(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, fmt.Errorf("resource name pattern must not be empty")
	}
	if len(p) > MaxPatternLength {
		return nil, fmt.Errorf("resource name pattern is %d bytes long; the limit is %d", len(p), MaxPatternLength)
	}
	// The pattern must compile on its own before it is anchored: "a)|(b"
	// would otherwise close the group and escape the anchors
	// (^(?:a)|(b)$ grants every name starting with "a").
	if _, err := regexp.Compile(p); err != nil {
		return nil, fmt.Errorf("resource name pattern %q is not a regular expression: %v", p, err)
	}
	re, err := regexp.Compile(`^(?:` + p + `)$`)
	if err != nil {
		return nil, fmt.Errorf("resource name pattern %q is not a regular expression: %v", p, err)
	}
	return re, nil
}

// AllPermissions is what the initial admin role gets: every action on every
// resource of every type.
func AllPermissions() []auth.Permission {
	var out []auth.Permission
	for _, t := range auth.ResourceTypes {
		for _, a := range []auth.Action{auth.Read, auth.Write} {
			out = append(out, auth.Permission{Resource: auth.ResourcePattern{Type: t, Name: ".*"}, Action: a})
		}
	}
	return out
}
