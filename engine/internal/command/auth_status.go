package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
)

// connectionStatus answers connectionStatus: the connection's
// authenticated user, its roles, and with showPrivileges the privileges
// they grant.
// https://www.mongodb.com/docs/manual/reference/command/connectionStatus/
func connectionStatus(r *Request) (bson.D, error) {
	showPrivs := false
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "showPrivileges":
			showPrivs, err = wantBool(r.Name, k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	users, roles := bson.A{}, bson.A{}
	var privs []auth.Privilege
	rs, ps, ok, err := r.Env.privileges(r.Conn)
	if err != nil {
		return nil, err
	}
	if ok {
		u := r.Conn.authUser()
		users = append(users, bson.D{{Key: "user", Value: u.Name}, {Key: "db", Value: u.DB}})
		for _, rn := range rs {
			roles = append(roles, rn.doc())
		}
		privs = ps
	}
	info := bson.D{
		{Key: "authenticatedUsers", Value: users},
		{Key: "authenticatedUserRoles", Value: roles},
	}
	if showPrivs {
		info = append(info, bson.E{Key: "authenticatedUserPrivileges", Value: privilegeArray(auth.Merged(privs))})
	}
	return bson.D{{Key: "authInfo", Value: info}}, nil
}
