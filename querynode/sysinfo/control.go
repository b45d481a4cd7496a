package sysinfo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxControlAnswer bounds what one control-plane answer may hold (the
// segment listing of a large cluster is the biggest).
const maxControlAnswer = 256 << 20

// HTTPControl reads control-plane paths from the first of urls that answers
// 200 (a follower redirects to the leader; the client follows). The client
// carries the process's internal credentials.
func HTTPControl(urls []string, client *http.Client) Control {
	return func(ctx context.Context, path string) ([]byte, error) {
		if len(urls) == 0 {
			return nil, errNoControl
		}
		var errs []error
		for _, base := range urls {
			b, err := getOne(ctx, client, strings.TrimRight(base, "/")+path)
			if err == nil {
				return b, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

func getOne(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %.200s", u, resp.StatusCode, b)
	}
	if len(b) > maxControlAnswer {
		return nil, fmt.Errorf("GET %s: answer larger than %d bytes", u, maxControlAnswer)
	}
	return b, nil
}
