package httpserve

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// addrForms is the part of every ParseAddr error that says what is accepted.
const addrForms = `use PORT, :PORT, HOST:PORT or [IPv6]:PORT with PORT from 0 to 65535 (PORT and :PORT listen on 127.0.0.1)`

// ParseAddr turns a --http value into the host:port to listen on.
//
// It accepts:
//
//	""            DefaultAddr
//	"8080"        127.0.0.1:8080
//	":8080"       127.0.0.1:8080
//	"host:8080"   host:8080
//	"[::1]:8080"  [::1]:8080
//
// ":PORT" means loopback, not all interfaces as it does for net.Listen:
// the server must never become reachable from the network by accident.
// To listen on every interface, say so with "0.0.0.0:PORT" or "[::]:PORT"
// (and see [CheckBind]). Port 0 picks a free port.
//
// The error names the value and lists the accepted forms.
func ParseAddr(s string) (string, error) {
	if s == "" {
		return DefaultAddr, nil
	}
	host, port := "", s
	if !isDigits(s) {
		var err error
		host, port, err = net.SplitHostPort(s)
		if err != nil {
			reason := err.Error()
			if ae, ok := errors.AsType[*net.AddrError](err); ok {
				reason = ae.Err
			}
			return "", addrError(s, reason)
		}
	}
	if port == "" {
		return "", addrError(s, "missing port")
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || !isDigits(port) {
		return "", addrError(s, fmt.Sprintf("port %q is not a number from 0 to 65535", port))
	}
	if host == "" {
		host = "127.0.0.1"
	} else if !validHost(host) {
		return "", addrError(s, fmt.Sprintf("host %q is neither a host name nor an IP address", host))
	}
	return net.JoinHostPort(host, strconv.FormatUint(n, 10)), nil
}

func addrError(s, reason string) error {
	return fmt.Errorf("listen address %q is not valid (%s); %s", s, reason, addrForms)
}

// isDigits reports whether s is non-empty and all ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validHost reports whether host is an IP address or made only of the
// characters a host name may contain.
func validHost(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	for _, c := range []byte(host) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// CheckBind reports whether it is safe to listen on addr (host:port, as
// from [ParseAddr]) with opts.
//
// A loopback address (localhost, 127.0.0.0/8, ::1) is always safe. Any other
// address, including 0.0.0.0, [::] and an empty host, needs opts to list
// AllowedHosts or Tokens: without either, anyone on the network could use
// the server, and any web page could reach it through DNS rebinding.
//
// Tokens alone pass this check, but [Handler] still accepts only loopback
// names and AllowedHosts in the Host header, so clients on other machines
// also need the name they connect with (or the server's IP) listed there.
//
// It also refuses opts that cannot work as meant: an AllowedHosts entry that
// is a wildcard or malformed (which [Handler] would ignore), and an empty
// token. The error says how to fix the configuration.
func CheckBind(addr string, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q is not host:port: %w", addr, err)
	}
	hosts, bad := parseAllowedHosts(opts.AllowedHosts)
	for _, tok := range opts.Tokens {
		if strings.TrimSpace(tok) == "" {
			bad = append(bad, errors.New("a bearer token is empty; remove it or give it a value"))
			break
		}
	}
	if len(bad) > 0 {
		return errors.Join(bad...)
	}
	if IsLoopback(host) || len(hosts) > 0 || len(opts.Tokens) > 0 {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without allowed hosts or tokens: "+
		"anyone on the network could use the server, and web pages could reach it through DNS rebinding; "+
		"set SKILLS_ALLOWED_HOSTS to the host names clients use, configure bearer tokens, or listen on 127.0.0.1", addr)
}
