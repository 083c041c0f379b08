// Package client is a small typed client for the Cubicle REST API calls the Terraform provider
// makes. Every answer is decoded into the models of models.go; every error into *APIError.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one Cubicle API with one key.
type Client struct {
	endpoint  *url.URL
	apiKey    string
	http      *http.Client
	userAgent string
}

// New checks the endpoint's form (an absolute http(s) URL) and returns a client for it.
func New(endpoint, apiKey, userAgent string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an absolute http(s) URL such as https://cubicle.example.com", endpoint)
	}
	return &Client{
		endpoint:  u,
		apiKey:    apiKey,
		http:      &http.Client{Timeout: 60 * time.Second},
		userAgent: userAgent,
	}, nil
}

// Endpoint is the API's base URL as configured.
func (c *Client) Endpoint() string { return c.endpoint.String() }

// APIError is an answer with a status of 400 or more, with the API's error envelope when it sent one.
type APIError struct {
	Method string
	Path   string
	Status int
	Body   ErrorBody
}

func (e *APIError) Error() string {
	msg := e.Body.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	code := e.Body.Code
	if code == "" {
		code = fmt.Sprintf("http_%d", e.Status)
	}
	s := fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, code, msg)
	if len(e.Body.Details) > 0 {
		if d, err := json.Marshal(e.Body.Details); err == nil {
			s += " " + string(d)
		}
	}
	if e.Body.RequestID != "" {
		s += " (request " + e.Body.RequestID + ")"
	}
	return s
}

// TransportError is a call that got no HTTP answer (refused, DNS, TLS, timeout) or one that was
// not Cubicle's JSON (a proxy's page, a wrong port).
type TransportError struct {
	Method, URL string
	Err         error
}

func (e *TransportError) Error() string { return fmt.Sprintf("%s %s: %v", e.Method, e.URL, e.Err) }
func (e *TransportError) Unwrap() error { return e.Err }

// StatusOf returns the HTTP status of an *APIError inside err, or 0.
func StatusOf(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Status
	}
	return 0
}

// IsNotFound is true for a 404 (an unknown name or id, or another tenant's).
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	u := *c.endpoint
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawQuery = query.Encode()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return &TransportError{Method: method, URL: u.String(), Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return &TransportError{Method: method, URL: u.String(), Err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return &TransportError{Method: method, URL: u.String(), Err: err}
	}
	if res.StatusCode >= 400 {
		apiErr := &APIError{Method: method, Path: path, Status: res.StatusCode}
		var envelope struct {
			Error ErrorBody `json:"error"`
		}
		if json.Unmarshal(raw, &envelope) == nil {
			apiErr.Body = envelope.Error
		}
		return apiErr
	}
	if out == nil || res.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		snippet := string(raw)
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		return &TransportError{
			Method: method, URL: u.String(),
			Err: fmt.Errorf("answer %d is not Cubicle's JSON (%v): %q — is the endpoint the Cubicle API?", res.StatusCode, err, snippet),
		}
	}
	return nil
}

func poolPath(name string) string { return "/v1/pools/" + url.PathEscape(name) }

// GetPool reads one pool with its live counts (404 for unknown names and other tenants' pools).
func (c *Client) GetPool(ctx context.Context, name string) (*Pool, error) {
	var p Pool
	return &p, c.do(ctx, http.MethodGet, poolPath(name), nil, nil, &p)
}

// ApplyPool creates or updates a pool declaratively (PUT): the same spec twice changes nothing.
func (c *Client) ApplyPool(ctx context.Context, name string, spec PoolSpec) (*Pool, error) {
	var p Pool
	return &p, c.do(ctx, http.MethodPut, poolPath(name), nil, spec, &p)
}

// DeletePool starts the drain: new claims are refused at once, live claims run to their end.
func (c *Client) DeletePool(ctx context.Context, name string) (*Pool, error) {
	var p Pool
	return &p, c.do(ctx, http.MethodDelete, poolPath(name), nil, nil, &p)
}

// listAll follows next_cursor until the last page.
func listAll[T any](ctx context.Context, c *Client, path string, query url.Values) ([]T, error) {
	if query == nil {
		query = url.Values{}
	}
	query.Set("limit", "200")
	var all []T
	for {
		var p page[T]
		if err := c.do(ctx, http.MethodGet, path, query, nil, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Data...)
		if p.NextCursor == nil || *p.NextCursor == "" {
			return all, nil
		}
		query.Set("cursor", *p.NextCursor)
	}
}

// ListPools lists every pool of the tenant (all pages).
func (c *Client) ListPools(ctx context.Context) ([]Pool, error) {
	return listAll[Pool](ctx, c, "/v1/pools", nil)
}

// ListClaims lists the tenant's claims of pools named `pool` with `status` (all pages).
func (c *Client) ListClaims(ctx context.Context, pool, status string) ([]Claim, error) {
	return listAll[Claim](ctx, c, "/v1/claims", url.Values{"pool": {pool}, "status": {status}})
}

// GetTenant reads the calling key's tenant.
func (c *Client) GetTenant(ctx context.Context) (*Tenant, error) {
	var t Tenant
	return &t, c.do(ctx, http.MethodGet, "/v1/tenant", nil, nil, &t)
}

// UpdateTenant sets the tenant's embedding origins (admin keys only).
func (c *Client) UpdateTenant(ctx context.Context, req UpdateTenantRequest) (*Tenant, error) {
	var t Tenant
	return &t, c.do(ctx, http.MethodPatch, "/v1/tenant", nil, req, &t)
}

// ListAPIKeys lists the tenant's keys, revoked ones included (admin keys only).
func (c *Client) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	return listAll[APIKey](ctx, c, "/v1/api-keys", nil)
}

// CreateAPIKey creates a key; the answer is the only time its secret is shown.
func (c *Client) CreateAPIKey(ctx context.Context, req CreateAPIKeyRequest) (*APIKeyCreated, error) {
	var k APIKeyCreated
	return &k, c.do(ctx, http.MethodPost, "/v1/api-keys", nil, req, &k)
}

// RevokeAPIKey revokes a key (idempotent on the API's side for a known id).
func (c *Client) RevokeAPIKey(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/api-keys/"+url.PathEscape(id), nil, nil, nil)
}
