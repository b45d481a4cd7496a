package server

import (
	"context"
	"errors"

	"strata/auth"
	"strata/ingest/input"
	"strata/ingest/middlemanager"
)

// checkTaskInputs authorizes and checks what a submitted ingestion task
// reads, before the task exists (issue 18): READ on EXTERNAL named by each
// input source's type ("local", "http", "inline"), Druid's model for SQL
// and native batch ingestion, then the process's input policy (files under
// svc.ingestion.local.allowedBaseDirs, http fetches to allowed protocols and
// addresses). The middle manager that runs the task enforces the policy
// again when it reads. An auth error is returned as is (401/403 with
// writeAuthError); a source that cannot be read is an *input.Error (400).
func checkTaskInputs(ctx context.Context, task middlemanager.Task) error {
	srcs, err := middlemanager.InputSources(task)
	if err != nil {
		return &input.Error{Msg: err.Error()}
	}
	seen := map[string]bool{}
	for _, s := range srcs {
		if seen[s.Type()] {
			continue
		}
		seen[s.Type()] = true
		if err := auth.Check(ctx, auth.Resource{Type: auth.External, Name: s.Type()}, auth.Read); err != nil {
			return err
		}
	}
	pol := input.ActivePolicy()
	for _, s := range srcs {
		if err := pol.Check(ctx, s); err != nil {
			var ie *input.Error
			if !errors.As(err, &ie) {
				err = &input.Error{Msg: err.Error()}
			}
			return err
		}
	}
	return nil
}

// isAuthError reports whether err is auth.Check's (401 or 403).
func isAuthError(err error) bool {
	return errors.Is(err, auth.ErrForbidden) || errors.Is(err, auth.ErrUnauthenticated)
}
