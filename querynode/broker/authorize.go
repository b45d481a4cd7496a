package broker

import (
	"context"
	"errors"
	"net/http"

	"strata/auth"
)

// authorize refuses a query whose caller may not READ every table it reads,
// those of its unions and subqueries included (issue 18). The HTTP server
// put the caller and its authorizer in ctx; without an authorizer security
// is off and every query is allowed.
func authorize(ctx context.Context, q *nativeQuery) *Error {
	if !auth.Enabled(ctx) {
		return nil
	}
	for _, t := range q.Tables() {
		if err := auth.Check(ctx, auth.Resource{Type: auth.Datasource, Name: t}, auth.Read); err != nil {
			return accessError(err)
		}
	}
	return nil
}

// accessError is Druid's answer to a query that is not allowed: 403 with
// the forbidden DruidException (the permission named in context), or 401
// without an identity.
func accessError(err error) *Error {
	var fe *auth.ForbiddenError
	if errors.As(err, &fe) {
		return &Error{Status: http.StatusForbidden, Code: codeStructured, ErrorCode: "forbidden", Persona: personaUser,
			Category: "FORBIDDEN", Message: "Unauthorized",
			Context: map[string]string{"resource": fe.Resource.String(), "action": string(fe.Action)}}
	}
	return &Error{Status: http.StatusUnauthorized, Code: codeStructured, ErrorCode: "unauthorized", Persona: personaUser,
		Category: "UNAUTHORIZED", Message: "Unauthorized"}
}
