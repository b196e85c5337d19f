#!/usr/bin/env bash
# The Debian packages (cpack -G DEB): contents and control fields (dpkg-deb), lintian (when
# installed; findings fail the test unless packaging/*.lintian-overrides explains them), the
# systemd unit (systemd-analyze verify, when present). Then, only as root and only when no
# collide-server package or file is on the machine: `dpkg -i` collide-server, run the installed
# server as the collide user on a free port with a temporary data directory (systemd does not run
# here), check it with the installed health probe and CLI; then start it by hand as its user on
# the package's data directory, /var/lib/collide, which the postinst made (as an operator without
# systemd, or a container, does) and query it; `dpkg --purge` it and check that its files are
# gone. Exits 77 (skipped) for the install part when not root.
#   deb_test.sh <source dir> <build dir>
set -euo pipefail
source_dir=$1
build_dir=$2

installed_by_us=
user_created_by_us=
# Runs from lib.sh's clean-up after the server is stopped: leave the machine as it was found.
extra_cleanup() {
  if [ -n "$installed_by_us" ] &&
     dpkg-query -W -f='${db:Status-Status}' collide-server 2>/dev/null | grep -qv '^not-installed$'; then
    dpkg --purge collide-server >/dev/null 2>&1 || true
  fi
  if [ -n "$user_created_by_us" ] && getent passwd collide >/dev/null; then
    userdel collide >/dev/null 2>&1 || true
  fi
  if [ -n "$user_created_by_us" ] && getent group collide >/dev/null; then
    groupdel collide >/dev/null 2>&1 || true
  fi
}
test_name="deb test"
source "$(dirname "$0")/lib.sh"

step "cpack -G DEB"
(cd "$tmp" && cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  fail "cpack failed: $(cat "$tmp/cpack.log")"
server_deb=$(ls "$tmp"/out/collide-server_*.deb 2>/dev/null | head -1)
dev_deb=$(ls "$tmp"/out/libcollide-client-dev_*.deb 2>/dev/null | head -1)
[ -n "$server_deb" ] && [ -n "$dev_deb" ] || fail "cpack made: $(ls "$tmp/out")"

for deb in "$server_deb" "$dev_deb"; do
  step "dpkg-deb -I $(basename "$deb")"
  dpkg-deb -I "$deb"
  step "dpkg-deb -c $(basename "$deb")"
  dpkg-deb -c "$deb"
done
dpkg-deb -c "$server_deb" | awk '{print $6}' >"$tmp/server.contents"
for path in ./usr/bin/collide-server ./usr/bin/collide ./usr/bin/collide-health-probe \
            ./lib/systemd/system/collide-server.service ./etc/collide/collide.conf \
            ./usr/share/doc/collide-server/copyright; do
  grep -qx -- "$path" "$tmp/server.contents" || fail "collide-server lacks $path"
done
dpkg-deb -c "$dev_deb" | awk '{print $6}' >"$tmp/dev.contents"
for path in ./usr/include/collide/client/cpp/client.h ./usr/include/collide/collide/v1/collide.pb.h \
            ./usr/share/doc/libcollide-client-dev/copyright; do
  grep -qx -- "$path" "$tmp/dev.contents" || fail "libcollide-client-dev lacks $path"
done
! grep -q '/storage\.' "$tmp/dev.contents" || fail "libcollide-client-dev ships the server's storage format"
for pattern in '/libcollide_client\.a$' '/cmake/collide/collideConfig\.cmake$' \
               '/pkgconfig/collide-client\.pc$'; do
  grep -q -- "$pattern" "$tmp/dev.contents" || fail "libcollide-client-dev has no $pattern"
done
depends=$(dpkg-deb -f "$server_deb" Depends)
for dependency in adduser libgrpc++ libprotobuf libc6; do
  [[ "$depends" == *"$dependency"* ]] || fail "collide-server Depends lacks $dependency: $depends"
done
dpkg-deb --ctrl-tarfile "$server_deb" | tar -xO ./conffiles | grep -qx /etc/collide/collide.conf ||
  fail "/etc/collide/collide.conf is not a conffile"

if command -v lintian >/dev/null 2>&1; then
  step "lintian --display-info --fail-on error,warning"
  lintian --display-info --fail-on error,warning "$server_deb" "$dev_deb" ||
    fail "lintian findings (fix them or explain them in packaging/*.lintian-overrides)"
  lintian --show-overrides "$server_deb" "$dev_deb" | grep '^O:' || true
else
  echo "lintian is not installed: skipping the lintian check (scripts/lib/setup.sh installs it)"
fi

# The unit with its ExecStart pointed at the packaged binary, extracted (verify wants it there).
mkdir "$tmp/root"
dpkg-deb -x "$server_deb" "$tmp/root"
if command -v systemd-analyze >/dev/null 2>&1; then
  step "systemd-analyze verify collide-server.service"
  mkdir "$tmp/unit"
  sed "s|/usr/bin/collide-server|$tmp/root/usr/bin/collide-server|" \
    "$tmp/root/lib/systemd/system/collide-server.service" >"$tmp/unit/collide-server.service"
  systemd-analyze verify "$tmp/unit/collide-server.service" || fail "systemd-analyze verify"
  systemd-analyze security --offline=yes "$tmp/unit/collide-server.service" 2>/dev/null | tail -1 || true
else
  echo "systemd-analyze is not installed: skipping the unit check"
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "not root: the dpkg -i / run / purge part is skipped"
  exit 77
fi
status=$(dpkg-query -W -f='${db:Status-Status}' collide-server 2>/dev/null || true)
if [ -n "$status" ] && [ "$status" != "not-installed" ]; then
  echo "a collide-server package is on this machine ($status): not touching it; install part skipped"
  exit 77
fi
while read -r path; do
  path=${path#.}
  if [ -f "$path" ]; then
    echo "$path exists (not from a collide-server package): install part skipped"
    exit 77
  fi
done < <(grep -v '/$' "$tmp/server.contents")
getent passwd collide >/dev/null || user_created_by_us=1

step "dpkg -i $(basename "$server_deb")"
installed_by_us=1
for attempt in $(seq 1 30); do
  if dpkg -i "$server_deb" >"$tmp/dpkg.log" 2>&1; then break; fi
  grep -q "lock" "$tmp/dpkg.log" || fail "dpkg -i failed: $(cat "$tmp/dpkg.log")"
  [ "$attempt" -lt 30 ] || fail "dpkg -i: the dpkg lock stayed taken: $(cat "$tmp/dpkg.log")"
  sleep 2
done
cat "$tmp/dpkg.log"
[ "$(dpkg-query -W -f='${db:Status-Status}' collide-server)" = installed ] ||
  fail "collide-server is not installed after dpkg -i"
getent passwd collide >/dev/null || fail "postinst made no collide user"
[ "$(getent passwd collide | cut -d: -f7)" = /usr/sbin/nologin ] || fail "collide has a login shell"
[ -f /etc/collide/collide.conf ] || fail "no /etc/collide/collide.conf"

step "the installed /usr/bin/collide-server as the collide user, port 0, temporary data dir"
chmod 0711 "$tmp"
mkdir "$tmp/run"
chown collide:collide "$tmp/run"
start_server "$tmp/run/port" "$tmp/server.log" setpriv --reuid=collide --regid=collide --init-groups \
  /usr/bin/collide-server --address=127.0.0.1:0 --port_file="$tmp/run/port" --data_dir="$tmp/run/data" \
  --log_level=warn
step "/usr/bin/collide-health-probe --address=$address"
/usr/bin/collide-health-probe --address="$address" || fail "the health probe failed"
step "/usr/bin/collide --address=$address scene create deb; scene list"
/usr/bin/collide --address="$address" scene create deb >/dev/null || fail "collide scene create"
/usr/bin/collide --address="$address" scene list | tee "$tmp/scenes"
grep -q deb "$tmp/scenes" || fail "the created scene is not listed"
kill -TERM "$server_pid"
wait "$server_pid" || fail "collide-server exited with $? on SIGTERM: $(cat "$tmp/server.log")"
server_pid=

step "/var/lib/collide, made by the postinst"
[ -d /var/lib/collide ] || fail "the postinst made no /var/lib/collide"
[ "$(stat -c '%U:%G %a' /var/lib/collide)" = "collide:collide 700" ] ||
  fail "/var/lib/collide is $(stat -c '%U:%G %a' /var/lib/collide), not collide:collide 700"
step "runuser -u collide -- /usr/bin/collide-server --data_dir=/var/lib/collide (no systemd)"
start_server /var/lib/collide/port "$tmp/by-hand.log" runuser -u collide -- \
  /usr/bin/collide-server --data_dir=/var/lib/collide --address=127.0.0.1:0 \
  --port_file=/var/lib/collide/port --log_level=warn
/usr/bin/collide --address="$address" scene create by-hand >/dev/null || fail "collide scene create"
/usr/bin/collide --address="$address" scene list | tee "$tmp/scenes"
grep -q by-hand "$tmp/scenes" || fail "the created scene is not listed"
# SIGTERM to the server itself (runuser's child): runuser would end its session on one instead.
server_child=$(ps -o pid= --ppid "$server_pid" | tr -d ' ')
[ -n "$server_child" ] || fail "runuser has no child process"
kill -TERM "$server_child"
wait "$server_pid" || fail "collide-server exited with $? on SIGTERM: $(cat "$tmp/by-hand.log")"
server_pid=

step "dpkg --purge collide-server"
dpkg --purge collide-server >"$tmp/purge.log" 2>&1 || fail "dpkg --purge failed: $(cat "$tmp/purge.log")"
cat "$tmp/purge.log"
installed_by_us=
status=$(dpkg-query -W -f='${db:Status-Status}' collide-server 2>/dev/null || true)
[ -z "$status" ] || [ "$status" = "not-installed" ] || fail "collide-server still $status after purge"
while read -r path; do
  path=${path#.}
  [ ! -e "$path" ] || fail "$path is left after the purge"
done < <(grep -v '/$' "$tmp/server.contents")
[ ! -e /etc/collide ] || fail "/etc/collide is left after the purge"
[ ! -e /var/lib/collide ] || fail "/var/lib/collide is left after the purge"
# What deb-systemd-helper enabled (a wants/ link, its state files) goes with the purge too.
for path in /etc/systemd/system/multi-user.target.wants/collide-server.service \
            /var/lib/systemd/deb-systemd-helper-enabled/collide-server.service.dsh-also \
            /var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/collide-server.service \
            /var/lib/systemd/deb-systemd-helper-masked/collide-server.service; do
  [ ! -e "$path" ] && [ ! -L "$path" ] || fail "$path is left after the purge"
done
echo "deb test: ok"
