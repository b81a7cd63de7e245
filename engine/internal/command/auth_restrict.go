package command

import (
	"net"
	"net/netip"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// parseRestrictions checks an authenticationRestrictions array: documents
// with clientSource and serverAddress lists of IP addresses or CIDR
// ranges. It returns BadValue for anything else.
// https://www.mongodb.com/docs/manual/reference/command/createUser/#authentication-restrictions
func parseRestrictions(arr bson.Raw) error {
	vals, err := bson.RawArray(arr).Values()
	if err != nil {
		return mongoerr.Newf(mongoerr.InvalidBSON, "%v", err)
	}
	for _, v := range vals {
		d, ok := v.DocumentOK()
		if !ok {
			return mongoerr.New(mongoerr.BadValue, "authenticationRestrictions must be an array of documents")
		}
		elems, _ := d.Elements()
		for _, e := range elems {
			if e.Key() != "clientSource" && e.Key() != "serverAddress" {
				return mongoerr.Newf(mongoerr.BadValue, "Unknown restriction field: %s", e.Key())
			}
			list, ok := e.Value().ArrayOK()
			if !ok {
				return mongoerr.Newf(mongoerr.BadValue, "'%s' must be an array of strings", e.Key())
			}
			addrs, _ := list.Values()
			for _, a := range addrs {
				s, ok := a.StringValueOK()
				if !ok {
					return mongoerr.Newf(mongoerr.BadValue, "'%s' must be an array of strings", e.Key())
				}
				if _, err := parseCIDR(s); err != nil {
					return mongoerr.Newf(mongoerr.BadValue, "Unable to parse CIDR string: %s", s)
				}
			}
		}
	}
	return nil
}

// parseCIDR reads "a.b.c.d/n" or a single address.
func parseCIDR(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// connAddr is the IP of a connection end; an in-process pipe is local.
func connAddr(s string) netip.Addr {
	if s == "pipe" || s == "" {
		return netip.MustParseAddr("127.0.0.1")
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// restrictionsMet reports whether a connection from client to server
// satisfies an authenticationRestrictions array: an empty or absent
// array always does, otherwise one of its documents must match both of
// its lists.
func restrictionsMet(arr bson.Raw, client, server netip.Addr) bool {
	if arr == nil {
		return true
	}
	vals, _ := bson.RawArray(arr).Values()
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		d, ok := v.DocumentOK()
		if ok && listMatches(d.Lookup("clientSource"), client) && listMatches(d.Lookup("serverAddress"), server) {
			return true
		}
	}
	return false
}

// listMatches reports whether addr lies in one of the ranges of v; a
// missing list matches every address.
func listMatches(v bson.RawValue, addr netip.Addr) bool {
	list, ok := v.ArrayOK()
	if !ok {
		return v.Type == 0
	}
	vals, _ := list.Values()
	for _, e := range vals {
		s, _ := e.StringValueOK()
		if p, err := parseCIDR(s); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

// userMayConnect checks the restrictions of a user and of every role it
// holds against the connection's addresses.
func (e *Env) userMayConnect(c *Conn, u userName) bool {
	d, err := e.users.current()
	if err != nil {
		return false
	}
	rec := d.user(u.Name, u.DB)
	if rec == nil {
		return false
	}
	client, server := connAddr(c.Remote), connAddr(c.Local)
	if !restrictionsMet(rec.Restrict, client, server) {
		return false
	}
	roles, _ := d.resolve(rec.Roles)
	for _, rn := range roles {
		if r := d.roles[rn]; r != nil && !restrictionsMet(r.Restrict, client, server) {
			return false
		}
	}
	return true
}
