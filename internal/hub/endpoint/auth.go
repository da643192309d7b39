package endpoint

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// OAuthOptions turn on the OAuth 2.1 resource-server mode of the
// endpoints: JWT access tokens of Issuer are accepted when their signature
// verifies against the issuer's keys (JWKS), they have not expired, and
// their audience holds the endpoint's URL (BaseURL + /p/{project}/mcp), as
// the MCP authorization specification asks (RFC 8707, RFC 9728).
type OAuthOptions struct {
	// Issuer is the authorization server's issuer URL; the tokens' iss
	// must equal it.
	Issuer string
	// JWKSURL is where the issuer publishes its keys. If empty, it is
	// discovered from Issuer's OpenID configuration when New runs.
	JWKSURL string
	// Algorithms are the signing algorithms accepted (default RS256,
	// ES256, PS256 and their larger sizes).
	Algorithms []string
	// Scopes, if set, are published in the metadata as the scopes the
	// endpoints support.
	Scopes []string
	// Client fetches the issuer's configuration and keys (nil: a client
	// with a 30 s timeout).
	Client *http.Client
}

type oauth struct {
	issuer   string
	scopes   []string
	base     string
	verifier *oidc.IDTokenVerifier
}

func newOAuth(ctx context.Context, o *OAuthOptions, base string) (*oauth, error) {
	if o.Issuer == "" {
		return nil, errors.New("endpoint: OAuthOptions.Issuer is required")
	}
	if base == "" {
		return nil, errors.New("endpoint: Options.BaseURL is required with OAuth: it is the audience of the endpoints' access tokens")
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	// The key set fetches with this context for as long as it lives.
	kctx := oidc.ClientContext(context.WithoutCancel(ctx), client)
	jwks := o.JWKSURL
	if jwks == "" {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, client), o.Issuer)
		if err != nil {
			return nil, fmt.Errorf("endpoint: discovering the OAuth issuer %s (set its JWKS URL to skip discovery): %w", o.Issuer, err)
		}
		var claims struct {
			JWKS string `json:"jwks_uri"`
		}
		if err := p.Claims(&claims); err != nil || claims.JWKS == "" {
			return nil, fmt.Errorf("endpoint: the OAuth issuer %s publishes no jwks_uri", o.Issuer)
		}
		jwks = claims.JWKS
	}
	algs := o.Algorithms
	if len(algs) == 0 {
		algs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512}
	}
	v := oidc.NewVerifier(o.Issuer, oidc.NewRemoteKeySet(kctx, jwks), &oidc.Config{
		// The audience is checked per endpoint, in verifyJWT.
		SkipClientIDCheck:    true,
		SupportedSigningAlgs: algs,
	})
	return &oauth{issuer: o.Issuer, scopes: o.Scopes, base: base, verifier: v}, nil
}

// resource is the URL of project id's endpoint.
func (o *oauth) resource(id string) string { return o.base + "/p/" + id + "/mcp" }

// metadataURL is where the endpoint's protected-resource metadata is.
func (o *oauth) metadataURL(id string) string { return o.base + wellKnownPrefix + "p/" + id + "/mcp" }

const wellKnownPrefix = "/.well-known/oauth-protected-resource/"

// serveMetadata serves RFC 9728 metadata for the endpoint at
// /.well-known/oauth-protected-resource/p/{id}/mcp. It does not say whether
// the project exists: the metadata is public and the same for all.
func (e *Endpoint) serveMetadata(w http.ResponseWriter, r *http.Request, rest string) {
	id, ok := projectOf("/" + rest)
	if e.oa == nil || !ok {
		writeError(w, http.StatusNotFound, "not_found", "no protected-resource metadata here")
		return
	}
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               e.oa.resource(id),
		AuthorizationServers:   []string{e.oa.issuer},
		ScopesSupported:        e.oa.scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "skills-hub project " + id,
	}).ServeHTTP(w, r)
}

// tokenInfo is who a verified request is.
type tokenInfo struct {
	project string          // the project of a project or index token, or the OAuth audience's
	kind    store.TokenKind // only a project token (or an access token) opens an endpoint
}

// authNote carries the verifier's finding to the error answer.
type authNote struct {
	code, msg string
	status    int
	tok       tokenInfo
}

type noteKey struct{}

// authenticate runs the go-sdk's bearer-token middleware with the
// endpoint's verifier, and next once it passes; its refusals are answered
// as JSON, with WWW-Authenticate (and, with OAuth, the metadata URL).
func (e *Endpoint) authenticate(w http.ResponseWriter, r *http.Request, id string, next func(http.ResponseWriter, *http.Request, tokenInfo)) {
	note := &authNote{}
	r = r.WithContext(context.WithValue(r.Context(), noteKey{}, note))
	opts := &auth.RequireBearerTokenOptions{AllowMissingExpiration: true}
	if e.oa != nil {
		opts.ResourceMetadataURL = e.oa.metadataURL(id)
	}
	reached := false
	cw := &captureWriter{h: http.Header{}}
	auth.RequireBearerToken(e.verify, opts)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		reached = true
		next(w, r, note.tok)
	})).ServeHTTP(cw, r)
	if reached {
		return
	}
	status := cw.status
	code, msg := note.code, note.msg
	switch {
	case note.status != 0:
		status = note.status
	case code == "":
		code, msg = "token_missing", "this endpoint needs a bearer token: Authorization: Bearer <project token>"
	}
	if status == http.StatusUnauthorized {
		v := `Bearer realm="skills-mcp"`
		if e.oa != nil {
			v += fmt.Sprintf(", resource_metadata=%q", e.oa.metadataURL(id))
		}
		if code != "token_missing" {
			v += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", v)
	}
	writeError(w, status, code, msg)
}

// captureWriter takes what the bearer middleware writes when it refuses,
// so that the refusal is answered in JSON.
type captureWriter struct {
	h      http.Header
	status int
}

func (c *captureWriter) Header() http.Header         { return c.h }
func (c *captureWriter) WriteHeader(s int)           { c.status = s }
func (c *captureWriter) Write(b []byte) (int, error) { return len(b), nil }

// verify is the endpoint's auth.TokenVerifier: project tokens of the store,
// and, with OAuth, the issuer's JWT access tokens for this endpoint.
func (e *Endpoint) verify(ctx context.Context, secret string, r *http.Request) (*auth.TokenInfo, error) {
	note, _ := ctx.Value(noteKey{}).(*authNote)
	if note == nil {
		note = &authNote{}
	}
	id, _ := projectOf(r.URL.Path)
	invalid := func(code, msg string) (*auth.TokenInfo, error) {
		note.code, note.msg = code, msg
		return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, msg)
	}
	if strings.HasPrefix(secret, "smcp_") {
		t, err := e.lookupToken(ctx, secret)
		switch {
		case errors.Is(err, store.ErrTokenInvalid):
			return invalid("token_invalid", "the token is unknown, revoked or expired: ask an administrator for a new project token")
		case err != nil:
			note.code, note.msg, note.status = "store_unavailable", "tokens cannot be checked now; retry later", http.StatusServiceUnavailable
			return nil, errors.New("store unavailable")
		}
		note.tok = tokenInfo{project: t.ProjectID, kind: t.Kind}
		ti := &auth.TokenInfo{UserID: "token:" + t.ID, Expiration: t.ExpiresAt}
		return ti, nil
	}
	if e.oa == nil {
		return invalid("token_invalid", "not a project token: project endpoints take tokens that start smcp_p_")
	}
	tok, err := e.oa.verifier.Verify(ctx, secret)
	if err != nil {
		var exp *oidc.TokenExpiredError
		if errors.As(err, &exp) {
			return invalid("token_expired", "the access token has expired: get a new one from the authorization server")
		}
		e.log.Info("refused an access token", "err", err) // the library's reason, never the token
		return invalid("token_invalid", "the access token is not valid here (signature, issuer or expiry)")
	}
	if !slices.Contains(tok.Audience, e.oa.resource(id)) {
		return invalid("token_audience", "the access token is not for this endpoint: its audience must be "+e.oa.resource(id))
	}
	note.tok = tokenInfo{project: id, kind: store.ProjectToken}
	return &auth.TokenInfo{UserID: "oauth:" + tok.Issuer + "#" + tok.Subject, Expiration: tok.Expiry}, nil
}

// lookupToken returns the token of a secret, from the cache or the store:
// an error matching store.ErrTokenInvalid for a refusal; any other is the
// store's (logged and counted here, never with the secret).
func (e *Endpoint) lookupToken(ctx context.Context, secret string) (store.Token, error) {
	sum := sha256.Sum256([]byte(secret))
	t, cached, refresh, epoch := e.tokens.get(sum)
	if refresh {
		e.reverify(sum, secret, epoch)
	}
	if cached {
		return t, nil
	}
	t, err := e.st.VerifyToken(ctx, secret)
	switch {
	case errors.Is(err, store.ErrTokenInvalid):
		return store.Token{}, err
	case err != nil:
		if ctx.Err() == nil { // else the client went away: no fault of the store
			e.log.Error("verifying a token", "err", err) // never the token
			e.storeErrors.Add(1)
		}
		return store.Token{}, err
	}
	e.tokens.put(sum, t, epoch)
	return t, nil
}

// reverify verifies a cached token again in the background, on a
// goroutine Close waits for.
func (e *Endpoint) reverify(sum [sha256.Size]byte, secret string, epoch uint64) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		t, err := e.st.VerifyToken(e.ctx, secret)
		switch {
		case err == nil:
			e.tokens.put(sum, t, epoch)
		case errors.Is(err, store.ErrTokenInvalid):
			e.tokens.failed(sum, true)
		default:
			e.tokens.failed(sum, false)
			if e.ctx.Err() == nil {
				e.log.Warn("verifying a cached token again", "err", err) // never the token
			}
		}
	}()
}

// TokenRevoked makes the endpoints forget at once what they verified of
// token id, for a revocation made in this process; one made elsewhere
// takes effect within Options.TokenCacheTTL.
func (e *Endpoint) TokenRevoked(id string) {
	e.tokens.forget(func(t store.Token) bool { return t.ID == id })
}
