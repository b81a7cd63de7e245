package auth

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Privilege grants actions on a resource.
type Privilege struct {
	Resource Resource
	Actions  []Action
}

// Doc returns p as a role's privilege document.
func (p Privilege) Doc() bson.D {
	acts := make(bson.A, len(p.Actions))
	for i, a := range p.Actions {
		acts[i] = string(a)
	}
	return bson.D{{Key: "resource", Value: p.Resource.Doc()}, {Key: "actions", Value: acts}}
}

// Need is one requirement of a command: all of Actions on Resource.
type Need = Privilege

// Set is the privileges a user holds, merged from all its roles.
type Set []Privilege

// Allows reports whether the set grants every action of n on n's
// resource. Actions may come from different privileges.
func (s Set) Allows(n Need) bool {
	for _, a := range n.Actions {
		ok := false
		for _, p := range s {
			if p.Resource.Covers(n.Resource) && slices.Contains(p.Actions, a) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// AllowsAll reports whether every need is granted.
func (s Set) AllowsAll(needs []Need) bool {
	for _, n := range needs {
		if !s.Allows(n) {
			return false
		}
	}
	return true
}

// Merged returns the privileges with those on the same resource combined
// and actions sorted, as rolesInfo's inheritedPrivileges lists them.
func Merged(ps []Privilege) []Privilege {
	var out []Privilege
	for _, p := range ps {
		i := slices.IndexFunc(out, func(q Privilege) bool { return q.Resource == p.Resource })
		if i < 0 {
			out = append(out, Privilege{Resource: p.Resource})
			i = len(out) - 1
		}
		for _, a := range p.Actions {
			if !slices.Contains(out[i].Actions, a) {
				out[i].Actions = append(out[i].Actions, a)
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Actions)
	}
	return out
}

// ParsePrivileges parses a createRole/grantPrivilegesToRole privileges
// array. It returns FailedToParse or BadValue as mongod does for a
// malformed privilege or an unknown action.
func ParsePrivileges(v bson.RawValue) ([]Privilege, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "privileges field must be an array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	out := make([]Privilege, 0, len(vals))
	for _, pv := range vals {
		p, err := parsePrivilege(pv)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePrivilege(v bson.RawValue) (Privilege, error) {
	doc, ok := v.DocumentOK()
	if !ok {
		return Privilege{}, mongoerr.New(mongoerr.FailedToParse, "Each entry of the privileges array must be an object")
	}
	var p Privilege
	rv, err := doc.LookupErr("resource")
	if err != nil {
		return p, mongoerr.New(mongoerr.FailedToParse, "BSON field 'Privilege.resource' is missing but a required field")
	}
	res, ok := rv.DocumentOK()
	if !ok {
		return p, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'Privilege.resource' is the wrong type, expected type 'object'")
	}
	if p.Resource, err = parseResource(res); err != nil {
		return p, err
	}
	av, err := doc.LookupErr("actions")
	if err != nil {
		return p, mongoerr.New(mongoerr.FailedToParse, "BSON field 'Privilege.actions' is missing but a required field")
	}
	acts, ok := av.ArrayOK()
	if !ok {
		return p, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'Privilege.actions' is the wrong type, expected type 'array'")
	}
	vals, _ := acts.Values()
	for _, a := range vals {
		s, ok := a.StringValueOK()
		if !ok {
			return p, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'Privilege.actions' is the wrong type 'array', expected type 'string'")
		}
		if !KnownAction(s) {
			return p, mongoerr.Newf(mongoerr.FailedToParse, "Unrecognized action privilege string: %s", s)
		}
		if !slices.Contains(p.Actions, Action(s)) {
			p.Actions = append(p.Actions, Action(s))
		}
	}
	return p, nil
}

func parseResource(doc bson.Raw) (Resource, error) {
	var r Resource
	elems, _ := doc.Elements()
	haveDB, haveColl := false, false
	for _, e := range elems {
		v := e.Value()
		switch e.Key() {
		case "cluster":
			r.Cluster = v.Boolean()
			if v.Type != bson.TypeBoolean || !r.Cluster {
				return r, mongoerr.New(mongoerr.BadValue, "resource: {cluster: true} is the only allowed form of the cluster resource")
			}
		case "anyResource":
			r.Any = v.Type == bson.TypeBoolean && v.Boolean()
			if !r.Any {
				return r, mongoerr.New(mongoerr.BadValue, "resource: {anyResource: true} is the only allowed form of anyResource")
			}
		case "db":
			s, ok := v.StringValueOK()
			if !ok {
				return r, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'ResourcePattern.db' is the wrong type, expected type 'string'")
			}
			r.DB, haveDB = s, true
		case "collection":
			s, ok := v.StringValueOK()
			if !ok {
				return r, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'ResourcePattern.collection' is the wrong type, expected type 'string'")
			}
			r.Collection, haveColl = s, true
		default:
			return r, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field 'ResourcePattern.%s' is an unknown field.", e.Key())
		}
	}
	n := 0
	for _, b := range []bool{r.Cluster, r.Any, haveDB || haveColl} {
		if b {
			n++
		}
	}
	if n != 1 || haveDB != haveColl {
		return r, mongoerr.New(mongoerr.BadValue, "resource pattern must contain 'collection' and 'db' fields, or be {cluster: true} or {anyResource: true}")
	}
	return r, nil
}
