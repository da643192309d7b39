package httpserve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

func TestParseAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", httpserve.DefaultAddr},
		{"8080", "127.0.0.1:8080"},
		{"0", "127.0.0.1:0"},
		{"65535", "127.0.0.1:65535"},
		{":8080", "127.0.0.1:8080"},
		{"localhost:8080", "localhost:8080"},
		{"mcp.example.com:443", "mcp.example.com:443"},
		{"0.0.0.0:3939", "0.0.0.0:3939"},
		{"192.168.1.20:3939", "192.168.1.20:3939"},
		{"[::1]:8080", "[::1]:8080"},
		{"[::]:8080", "[::]:8080"},
		{"08080", "127.0.0.1:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := httpserve.ParseAddr(tt.in)
			if err != nil {
				t.Fatalf("ParseAddr(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseAddr(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseAddrErrors(t *testing.T) {
	tests := []struct {
		in     string
		reason string // a fragment of the error that names the problem
	}{
		{"abc", "missing port"},
		{"70000", `port "70000"`},
		{"65536", `port "65536"`},
		{"host:port:x", "too many colons"},
		{"localhost:", "missing port"},
		{"localhost:http", `port "http"`},
		{":-1", `port "-1"`},
		{"::1", "too many colons"},
		{"http://localhost:8080", "too many colons"},
		{"bad host:80", `host "bad host"`},
		{"[::1", "missing ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := httpserve.ParseAddr(tt.in)
			if err == nil {
				t.Fatalf("ParseAddr(%q) = %q, want an error", tt.in, got)
			}
			msg := err.Error()
			for _, want := range []string{
				fmt.Sprintf("%q", tt.in), // names the value
				tt.reason,
				"PORT, :PORT, HOST:PORT or [IPv6]:PORT", // lists the accepted forms
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("ParseAddr(%q) error %q does not contain %q", tt.in, msg, want)
				}
			}
		})
	}
}

func TestCheckBind(t *testing.T) {
	withHosts := &httpserve.Options{AllowedHosts: []string{"mcp.example.com"}}
	withTokens := &httpserve.Options{Tokens: []string{"s3cret"}}
	tests := []struct {
		name    string
		addr    string
		opts    *httpserve.Options
		wantErr string // "" for success, else a fragment of the error
	}{
		{"ipv4 loopback", "127.0.0.1:3939", nil, ""},
		{"other 127/8 address", "127.0.0.2:3939", nil, ""},
		{"ipv6 loopback", "[::1]:3939", nil, ""},
		{"localhost", "localhost:3939", nil, ""},
		{"LOCALHOST", "LOCALHOST:3939", nil, ""},
		{"all interfaces", "0.0.0.0:3939", nil, "SKILLS_ALLOWED_HOSTS"},
		{"all ipv6 interfaces", "[::]:3939", nil, "SKILLS_ALLOWED_HOSTS"},
		{"empty host", ":3939", nil, "SKILLS_ALLOWED_HOSTS"},
		{"LAN address", "192.168.1.20:3939", nil, "DNS rebinding"},
		{"LAN host name", "box.lan:3939", &httpserve.Options{}, "refusing to listen"},
		{"all interfaces with allowed hosts", "0.0.0.0:3939", withHosts, ""},
		{"LAN address with allowed hosts", "192.168.1.20:3939", withHosts, ""},
		{"LAN address with tokens", "192.168.1.20:3939", withTokens, ""},
		{"all interfaces with tokens", "0.0.0.0:3939", withTokens, ""},
		{"wildcard host is refused", "0.0.0.0:3939", &httpserve.Options{AllowedHosts: []string{"*"}}, "list each host name explicitly"},
		{"wildcard host is refused on loopback too", "127.0.0.1:3939", &httpserve.Options{AllowedHosts: []string{"*.example.com"}}, "wildcards are not supported"},
		{"only blank allowed hosts", "0.0.0.0:3939", &httpserve.Options{AllowedHosts: []string{"", " "}}, "refusing to listen"},
		{"malformed allowed host", "127.0.0.1:3939", &httpserve.Options{AllowedHosts: []string{"example.com:http"}}, "malformed"},
		{"empty token", "0.0.0.0:3939", &httpserve.Options{Tokens: []string{""}}, "token is empty"},
		{"not host:port", "3939", nil, "not host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := httpserve.CheckBind(tt.addr, tt.opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("CheckBind(%q) = %v, want nil", tt.addr, err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("CheckBind(%q) = nil, want an error containing %q", tt.addr, tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("CheckBind(%q) = %q, want it to contain %q", tt.addr, err, tt.wantErr)
			}
		})
	}
}

// TestIsLoopback: the one loopback test, for hosts with and without a
// port, in every spelling of the same machine, and nothing else.
func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "localhost.": true, "localhost:3939": true,
		"127.0.0.1": true, "127.1.2.3:80": true, "[::1]": true, "[::1]:3939": true, "::1": true,
		"::ffff:127.0.0.1": true, "[::ffff:127.0.0.1]:80": true, "[fe80::1%lo]": false, "[::1%lo]:80": true,
		"sub.localhost": false, "localhost.example": false, "example.com": false, "192.0.2.1": false,
		"[2001:db8::1]:80": false, "0.0.0.0": false, "": false, "[": false, "127.0.0.1.evil": false,
	} {
		if got := httpserve.IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
