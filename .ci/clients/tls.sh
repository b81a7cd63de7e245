#!/usr/bin/env bash
# mongosh over TLS: starts `formwork serve` with a throwaway CA and server
# certificate (made with openssl), then checks that mongosh with
# --tls --tlsCAFile pings, inserts and finds, and that a plain-text mongosh
# is refused while the server keeps serving. Called by run.sh with the
# formwork binary and mongosh; exits non-zero on failure.
set -euo pipefail
bin="$1"
mongosh="$2"
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
"$bin" serve --listen "127.0.0.1:$port" --tls-cert-file "$dir/server.crt" \
  --tls-key-file "$dir/server.key" --tls-ca-file "$dir/ca.pem" >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

fail() { echo "mongosh over TLS: $*"; echo "server log:"; cat "$dir/serve.log"; exit 1; }
check='db.runCommand({ping: 1}).ok === 1 || quit(1);
db.tls.insertOne({_id: 1, x: "over tls"});
const d = db.tls.findOne({_id: 1});
if (!d || d.x !== "over tls") { print("wrong document: " + EJSON.stringify(d)); quit(1); }
print("mongosh over TLS: ok");'
out=$("$mongosh" --quiet --norc --tls --tlsCAFile "$dir/ca.pem" "mongodb://localhost:$port/ci" --eval "$check" 2>&1) ||
  fail "TLS session failed: $out"
echo "$out"
if echo "$out" | grep -qiE 'warning|deprecat'; then fail "mongosh printed a warning"; fi
if "$mongosh" --quiet --norc "mongodb://localhost:$port/ci?serverSelectionTimeoutMS=2000" \
  --eval 'db.runCommand({ping: 1})' >/dev/null 2>&1; then
  fail "a plain-text mongosh was served"
fi
out=$("$mongosh" --quiet --norc "mongodb://localhost:$port/ci?tls=true&tlsCAFile=$dir/ca.pem" \
  --eval 'print(db.tls.countDocuments({}))' 2>&1) || fail "TLS after a plain client failed: $out"
[ "$out" = 1 ] || fail "count after a plain client: $out"
echo "mongosh over TLS: plain client refused, server still serving"
