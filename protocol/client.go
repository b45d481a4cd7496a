package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// FetchAnnouncement asks the historical at baseURL what it serves. With since
// set to the version of the last answer, an unchanged set comes back as
// Unchanged without segments.
func FetchAnnouncement(ctx context.Context, c *http.Client, baseURL, since string) (*Announcement, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+AnnouncePath+"?since="+url.QueryEscape(since), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %.200s", baseURL, resp.StatusCode, body)
	}
	var ann Announcement
	if err := json.Unmarshal(body, &ann); err != nil {
		return nil, fmt.Errorf("%s: bad announcement: %w", baseURL, err)
	}
	return &ann, nil
}
