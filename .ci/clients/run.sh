#!/usr/bin/env bash
# Runs mongosh and pymongo scripts against a freshly started `formwork
# serve`, failing on any error or wrong result. Installs the clients:
# mongosh from npm into a cache folder, pymongo from Debian's packages.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${FORMWORK_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/formwork-ci}"
mkdir -p "$cache"

# mongosh 2.x from the npm registry (it runs without install scripts).
if [ ! -x "$cache/node_modules/.bin/mongosh" ]; then
  echo "installing mongosh@2"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error mongosh@2 >/dev/null)
fi
mongosh="$cache/node_modules/.bin/mongosh"

# pymongo from Debian, visible only to Debian's own python3.
py=/usr/bin/python3
if ! "$py" -c 'import pymongo' 2>/dev/null; then
  echo "installing python3-pymongo"
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
  "${apt_get[@]}" update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq python3-pymongo >/dev/null
fi

bin="$cache/formwork"
(cd "$root" && go build -o "$bin" ./cmd/formwork)

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log="$cache/serve.log"
"$bin" serve --listen "127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done
uri="mongodb://127.0.0.1:$port/ci"

status=0
echo "-- mongosh $("$mongosh" --version)"
# mongosh.js, then each feature's own mongosh_<area>.js.
for script in "$here"/mongosh.js "$here"/mongosh_*.js; do
  [ -e "$script" ] || continue
  if ! out=$("$mongosh" --quiet --norc "$uri" --file "$script" 2>&1); then status=1; fi
  echo "$out"
  # mongosh prints server warnings it would not print against mongod.
  if echo "$out" | grep -qiE 'warning|deprecat'; then echo "mongosh printed a warning ($(basename "$script"))"; status=1; fi
done

# mongosh over TLS, against a second server started with the --tls-* flags.
if ! bash "$here/tls.sh" "$bin" "$mongosh"; then status=1; fi
if ! bash "$here/auth.sh" "$bin" "$mongosh" "$py"; then status=1; fi

echo "-- pymongo $("$py" -c 'import pymongo; print(pymongo.version)')"
if ! "$py" -W error::DeprecationWarning "$here/pymongo_check.py" "$uri"; then status=1; fi
if ! "$py" -W error::DeprecationWarning "$here/pymongo_txn.py" "$uri"; then status=1; fi

if [ $status -ne 0 ]; then
  echo "server log:"; cat "$log"
  echo "real clients: 0 passed, 1 failed"
  exit 1
fi
echo "real clients: 2 passed, 0 failed"
