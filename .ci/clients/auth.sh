#!/usr/bin/env bash
# Authentication with real clients: starts `formwork serve --auth` with TLS
# (a throwaway CA and server certificate made with openssl), creates the
# first user through the localhost exception with an unauthenticated
# mongosh, then checks that mongosh and pymongo authenticate with
# SCRAM-SHA-256 over TLS and read and write, that a wrong password fails
# with AuthenticationFailed (18), and that an unauthenticated mongosh gets
# Unauthorized (13) for anything but the handshake. Called by run.sh with
# the formwork binary, mongosh and python3; exits non-zero on failure.
set -euo pipefail
bin="$1"
mongosh="$2"
py="$3"
dir="$(mktemp -d)"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 1 \
  -subj /CN=formwork-ci-ca 2>/dev/null
openssl req "${ec[@]}" -keyout "$dir/server.key" -out "$dir/server.csr" -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$dir/ext"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
  -out "$dir/server.crt" -days 1 -extfile "$dir/ext" 2>/dev/null

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --auth --listen "127.0.0.1:$port" --dbpath "$dir/data" --tls-cert-file "$dir/server.crt" \
  --tls-key-file "$dir/server.key" --tls-ca-file "$dir/ca.pem" >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

fail() { echo "auth: $*"; echo "server log:"; cat "$dir/serve.log"; exit 1; }
tls=(--quiet --norc --tls --tlsCAFile "$dir/ca.pem")
base="mongodb://localhost:$port"

# The localhost exception: the first user, created without credentials.
out=$("$mongosh" "${tls[@]}" "$base/admin" --eval \
  'db.createUser({user: "ciadmin", pwd: "ci-secret", roles: ["root"]}); print("first user created")' 2>&1) ||
  fail "localhost exception: $out"
echo "$out"

# An unauthenticated client can do nothing but the handshake.
out=$("$mongosh" "${tls[@]}" "$base/ci" --eval '
db.runCommand({ping: 1}).ok === 1 || quit(2);
for (const cmd of [{find: "c"}, {insert: "c", documents: [{}]}, {listDatabases: 1}, {createUser: "x", pwd: "y", roles: []}]) {
  try { db.adminCommand(cmd); print("unauthenticated " + Object.keys(cmd)[0] + " was served"); quit(1); }
  catch (e) { if (e.code !== 13 || e.codeName !== "Unauthorized") { print("wrong error: " + e); quit(1); } }
}
print("unauthenticated mongosh: Unauthorized (13)");' 2>&1) || fail "unauthenticated mongosh: $out"
echo "$out"

# SCRAM-SHA-256 over TLS: a read/write user created by the admin.
out=$("$mongosh" "${tls[@]}" "$base/ci?authSource=admin&authMechanism=SCRAM-SHA-256" \
  -u ciadmin -p ci-secret --eval '
db.getSiblingDB("ci").createUser({user: "app", pwd: "app-pw", roles: ["readWrite"]});
db.auth_ci.insertOne({_id: 1, x: "authenticated"});
const d = db.auth_ci.findOne({_id: 1});
if (!d || d.x !== "authenticated") { print("wrong document: " + EJSON.stringify(d)); quit(1); }
const st = db.runCommand({connectionStatus: 1}).authInfo;
if (st.authenticatedUsers[0].user !== "ciadmin") { print("connectionStatus: " + EJSON.stringify(st)); quit(1); }
print("mongosh SCRAM-SHA-256 over TLS: ok");' 2>&1) || fail "mongosh SCRAM-SHA-256: $out"
echo "$out"
if echo "$out" | grep -qiE 'warning|deprecat'; then fail "mongosh printed a warning"; fi

# A read/write user is refused an admin command, with mongod's message.
out=$("$mongosh" "${tls[@]}" "$base/ci?authSource=ci" -u app -p app-pw --eval '
db.c.insertOne({a: 1});
try { db.adminCommand({serverStatus: 1}); print("serverStatus was served"); quit(1); }
catch (e) { if (e.code !== 13 || !/^not authorized on admin to execute command \{ serverStatus: /.test(e.message)) { print("wrong error: " + e); quit(1); } }
print("mongosh readWrite user: roles enforced");' 2>&1) || fail "mongosh role enforcement: $out"
echo "$out"

# A wrong password fails authentication.
if out=$("$mongosh" "${tls[@]}" "$base/ci?authSource=admin" -u ciadmin -p wrong --eval 'db.runCommand({ping: 1})' 2>&1); then
  fail "a wrong password authenticated: $out"
fi
echo "$out" | grep -q "Authentication failed" || fail "wrong password: $out"
echo "mongosh wrong password: Authentication failed."

# pymongo, SCRAM-SHA-256 over TLS.
"$py" -W error::DeprecationWarning - "$port" "$dir/ca.pem" <<'PY' || fail "pymongo"
import sys
import pymongo
from pymongo.errors import OperationFailure

port, ca = sys.argv[1], sys.argv[2]
def client(**kw):
    return pymongo.MongoClient(f"mongodb://localhost:{port}/", tls=True, tlsCAFile=ca,
                               serverSelectionTimeoutMS=5000, **kw)
c = client(username="app", password="app-pw", authSource="ci", authMechanism="SCRAM-SHA-256")
coll = c.ci.pymongo_auth
coll.insert_one({"_id": 1, "via": "pymongo"})
assert coll.find_one({"_id": 1})["via"] == "pymongo"
st = c.ci.command("connectionStatus")["authInfo"]
assert st["authenticatedUsers"] == [{"user": "app", "db": "ci"}], st
assert {"role": "readWrite", "db": "ci"} in st["authenticatedUserRoles"], st
try:
    c.admin.command("getCmdLineOpts")
    raise SystemExit("pymongo: getCmdLineOpts was served to a readWrite user")
except OperationFailure as e:
    assert e.code == 13, e.details
bad = client(username="app", password="nope", authSource="ci", authMechanism="SCRAM-SHA-256")
try:
    bad.ci.command("ping")
    raise SystemExit("pymongo: a wrong password authenticated")
except OperationFailure as e:
    assert e.code == 18, e.details
anon = client()
try:
    anon.ci.c.find_one()
    raise SystemExit("pymongo: an unauthenticated find was served")
except OperationFailure as e:
    assert e.code == 13 and "requires authentication" in str(e), e.details
print("pymongo SCRAM-SHA-256 over TLS: ok")
PY
