#!/usr/bin/env bash
# The container image against the collide-server package its runtime stage installs, without a
# Docker engine: builds the package as the Dockerfile's build stage and tests/install/deb_test.sh
# do (cpack -G DEB with the build's CPackConfig.cmake), then checks that
#  1. the package's file name matches what the Dockerfile copies out of the build stage;
#  2. every path the image uses (docker/Dockerfile's runtime stage, the programs
#     docker/entrypoint.sh runs, docker/compose.yaml's mounts and commands) is in the package
#     (dpkg-deb -c), made by the package's postinst (its `install -d`: the data directory) or made
#     by the Dockerfile itself (its mkdir and COPY destinations);
#  3. the libraries the packaged binaries and the arena image's collide-arena need come from
#     packages the .deb's Depends names (so apt-get install of the .deb alone runs them);
#  4. docker/entrypoint.sh maps the Dockerfile's ENV and compose's environment to the server's
#     flags (run with a stub collide-server that prints its arguments: the transcript below);
#  5. docker/entrypoint.sh runs the packaged collide-server, and the Dockerfile's HEALTHCHECK
#     command (the packaged probe) reports it SERVING; SIGTERM stops it cleanly.
# Usage: image_package_test.sh <repository root> <build dir>
set -euo pipefail
root=$1
build_dir=$2
dockerfile=$root/docker/Dockerfile
entrypoint=$root/docker/entrypoint.sh
test_name="docker package test"
source "$root/tests/install/lib.sh"

# The Dockerfile with continuation lines joined and comments dropped: one instruction a line.
instructions=$(sed -e '/^[[:space:]]*#/d' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
               tr -s ' ')
stage() { awk -v name="$1" '$1 == "FROM" && $3 == "AS" {on = ($4 == name); next} on' <<<"$instructions"; }
runtime_stage=$(stage runtime)
arena_stage=$(stage arena)
[ -n "$runtime_stage" ] || fail "docker/Dockerfile has no runtime stage"

step "cpack -G DEB (as the Dockerfile's build stage and tests/install/deb_test.sh)"
(cd "$tmp" && cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  fail "cpack failed: $(cat "$tmp/cpack.log")"
server_deb=$(ls "$tmp"/out/collide-server_*.deb 2>/dev/null | head -1)
[ -n "$server_deb" ] || fail "cpack made no collide-server package: $(ls "$tmp/out")"

# ---- 1. the name the Dockerfile copies ----------------------------------------------------------
pattern=$(grep -oE '^COPY --from=build /src/packages/[^ ]+' <<<"$runtime_stage" | sed 's|.*/||')
[ -n "$pattern" ] || fail "the runtime stage copies no package out of /src/packages"
# shellcheck disable=SC2254  # the Dockerfile's pattern, as a pattern
case "$(basename "$server_deb")" in
  $pattern) echo "$(basename "$server_deb") matches the Dockerfile's COPY /src/packages/$pattern" ;;
  *) fail "cpack made $(basename "$server_deb"), which the Dockerfile's $pattern does not match" ;;
esac

# ---- 2. the paths the image uses ----------------------------------------------------------------
step "dpkg-deb -c $(basename "$server_deb")"
dpkg-deb -c "$server_deb" | awk '{print $6}' | sed -e 's|^\.||' -e 's|/$||' | grep . >"$tmp/contents"
cat "$tmp/contents"
dpkg-deb -x "$server_deb" "$tmp/root"

# What a stage makes itself: its mkdir arguments and COPY destinations (a directory destination
# gets the source's base name).
made_by() {
  grep -oE 'mkdir -p [^&]+' <<<"$1" | cut -d' ' -f3- | tr ' ' '\n'
  grep -E '^COPY ' <<<"$1" | while read -r -a words; do
    local destination=${words[-1]}
    if [[ $destination == */ ]]; then
      echo "$destination$(basename "${words[-2]}")"
    else
      echo "$destination"
    fi
  done
}
# What the package's postinst makes when apt-get installs it (the data directory).
dpkg-deb --ctrl-tarfile "$server_deb" | tar -xO ./postinst >"$tmp/postinst"
made_by_postinst=$(grep -oE '^ *install -d( -[ogm] [^ ]+)* /[^ ]+$' "$tmp/postinst" | awk '{print $NF}')
[ -n "$made_by_postinst" ] || fail "the package's postinst makes no directory (the data directory)"
made_runtime=$(made_by "$runtime_stage" | grep -v '^/tmp/'; echo "$made_by_postinst")
made_arena=$(made_by "$arena_stage" | grep -v '^/tmp/'; echo "$made_by_postinst")
# Debian's default PATH, where the entrypoint and compose find programs by name.
image_path=(/usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin)

# check_path WHERE PATH MADE: PATH is in the package or in MADE (the stage's own paths).
check_path() {
  if grep -qxF -- "$2" "$tmp/contents"; then
    echo "  $1: $2 (in the package)"
  elif grep -qxF -- "$2" <<<"$made_by_postinst"; then
    echo "  $1: $2 (made by the package's postinst)"
  elif grep -qxF -- "$2" <<<"$3"; then
    echo "  $1: $2 (made by the Dockerfile)"
  else
    fail "$1 uses $2, which is neither in the package, made by its postinst nor by the Dockerfile"
  fi
}
# check_program WHERE NAME MADE: a program run by name is found on the image's PATH.
check_program() {
  local dir
  for dir in "${image_path[@]}"; do
    if grep -qxF -- "$dir/$2" "$tmp/contents" || grep -qxF -- "$dir/$2" <<<"$3"; then
      check_path "$1" "$dir/$2" "$3"
      return
    fi
  done
  fail "$1 runs $2, which is on no PATH directory of the image (${image_path[*]})"
}

step "paths of the runtime stage, the entrypoint and compose"
mapfile -t runtime_paths < <(grep -vE '^(COPY|RUN) ' <<<"$runtime_stage" |
                             grep -oE '/(usr|etc|var|lib|opt|srv)/[A-Za-z0-9_./-]*' | sort -u)
mapfile -t run_paths < <(grep -E '^RUN ' <<<"$runtime_stage" |
                         grep -oE '(chown|chmod) [^&]+' | grep -oE '/(usr|etc|var|lib|opt|srv)/[A-Za-z0-9_./-]*' |
                         sort -u)
[ ${#runtime_paths[@]} -gt 0 ] || fail "no paths found in the runtime stage"
mapfile -t runtime_paths < <(printf '%s\n' "${runtime_paths[@]}" "${run_paths[@]}" | sort -u)
for path in "${runtime_paths[@]}"; do check_path Dockerfile "$path" "$made_runtime"; done
grep -qxF 'ENTRYPOINT ["collide-entrypoint"]' <<<"$runtime_stage" &&
  check_program "Dockerfile ENTRYPOINT" collide-entrypoint "$made_runtime"
mapfile -t programs < <(grep -oE '(exec|help=\$\() *collide-[a-z-]+' "$entrypoint" | grep -oE 'collide-[a-z-]+' |
                        sort -u)
[ ${#programs[@]} -gt 0 ] || fail "docker/entrypoint.sh runs no collide program"
for program in "${programs[@]}"; do check_program docker/entrypoint.sh "$program" "$made_runtime"; done
# compose: what each service's image is given (mount targets, commands, the entrypoint's variables).
/usr/bin/python3 - "$root/docker/compose.yaml" >"$tmp/compose" <<'EOF'
import sys
import yaml
services = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))["services"]
environments = set()
for name, service in services.items():
    image = service.get("image", "")
    if not image.startswith("collide"):
        continue
    kind = "runtime" if image == "collide:local" else "arena"
    for volume in service.get("volumes", []):
        print(kind, "path", volume.split(":")[1])
    command = service.get("command") or []
    if command and not command[0].startswith("-"):
        print(kind, "program", command[0])
    # One service's environment per image (the shards differ only in their own address and
    # backend): each variable once.
    if kind in environments:
        continue
    environments.add(kind)
    for key, value in (service.get("environment") or {}).items():
        print(kind, "env", f"{key}={value}")
EOF
[ -s "$tmp/compose" ] || fail "docker/compose.yaml runs no collide image"
# The three shards mount and run the same: once each.
sort -u -o "$tmp/compose" "$tmp/compose"
compose_env=()
while read -r kind what value; do
  made=$made_runtime
  [ "$kind" = arena ] && made=$made_arena
  case "$what" in
    path) check_path "compose.yaml ($kind)" "$value" "$made" ;;
    program) check_program "compose.yaml ($kind)" "$value" "$made" ;;
    env) compose_env+=("$value") ;;
  esac
done <"$tmp/compose"

# ---- 3. libraries: from the packages the .deb depends on ----------------------------------------
step "the binaries' libraries and the .deb's Depends"
depends=$(dpkg-deb -f "$server_deb" Depends)
echo "Depends: $depends"
declare -A provided=([libc6]=1 [libgcc-s1]=1)  # in every Debian image (essential)
while read -r name; do provided[$name]=1; done < <(tr ',|' '\n\n' <<<"$depends" | awk '{print $1}' | grep .)
binaries=("$tmp"/root/usr/bin/*)
arena_binary=$build_dir/examples/arena/cpp/collide-arena
if grep -qF 'collide-arena' <<<"$arena_stage"; then
  [ -x "$arena_binary" ] || fail "the arena stage copies collide-arena, which $build_dir lacks"
  binaries+=("$arena_binary")
fi
for binary in "${binaries[@]}"; do
  # The libraries the binary itself names (NEEDED); those load their own through their packages.
  mapfile -t needed < <(readelf -d "$binary" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
  owners=()
  for library in "${needed[@]}"; do
    path=$(ldd "$binary" | awk -v lib="$library" '$1 == lib && $3 ~ /^\// {print $3}')
    [ -n "$path" ] || fail "$(basename "$binary"): $library is not found (ldd)"
    owner=""
    for candidate in "$path" "$(realpath "$path")" "/usr$path"; do
      owner=$(dpkg -S "$candidate" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1) || true
      [ -n "$owner" ] && break
    done
    [ -n "$owner" ] || fail "$(basename "$binary"): $path belongs to no Debian package"
    if [[ $owner =~ ^lib(a|ub|t|l|hwa)san[0-9] ]]; then
      fail "$(basename "$binary") loads the sanitizer runtime $owner: test an optimised build"
    fi
    # Named in Depends itself, or through a virtual package it provides (libspdlog1.10-fmt9).
    satisfied=${provided[$owner]:-}
    while read -r virtual; do
      [ -n "$virtual" ] && [ -n "${provided[$virtual]:-}" ] && satisfied=1
    done < <(dpkg-query -W -f='${Provides}\n' "$owner" 2>/dev/null | tr ',' '\n' | awk '{print $1}')
    [ -n "$satisfied" ] ||
      fail "$(basename "$binary") needs $library from $owner, which the .deb's Depends does not name"
    owners+=("$owner")
  done
  echo "  $(basename "$binary"): $(printf '%s\n' "${owners[@]}" | sort -u | tr '\n' ' ')"
done

# ---- 4. the entrypoint's mapping, shown by a stub server ----------------------------------------
step "docker/entrypoint.sh with the image's ENV, compose's environment and a stub collide-server"
mkdir "$tmp/stub"
cat >"$tmp/stub/collide-server" <<EOF
#!/bin/sh
# The packaged server's flag list; any other call prints the arguments it was given.
if [ "\$1" = --helpfull ]; then exec "$tmp/root/usr/bin/collide-server" --helpfull; fi
printf '%s\n' "\$@"
EOF
chmod +x "$tmp/stub/collide-server"
mapfile -t image_env < <(grep -E '^ENV ' <<<"$runtime_stage" | sed 's/^ENV //' | tr ' ' '\n' | grep .)
[ ${#image_env[@]} -gt 0 ] || fail "the runtime stage sets no ENV"
# The CLI's COLLIDE_TOKEN rides along and must not become a flag.
env=("${image_env[@]}" "${compose_env[@]}" COLLIDE_TOKEN_FILE=/run/secrets/collide-tokens
     COLLIDE_TOKEN=for-the-cli)
echo "+ env -i ${env[*]} docker/entrypoint.sh --log_level=debug"
env -i "PATH=$tmp/stub:/usr/bin:/bin" "${env[@]}" "$entrypoint" --log_level=debug >"$tmp/flags" ||
  fail "the entrypoint failed: $(cat "$tmp/flags")"
sed 's/^/  /' "$tmp/flags"
# Expected: each COLLIDE_<NAME>=<value> but COLLIDE_TOKEN as --<name>=<value>, sorted by variable,
# then the arguments.
expected=$(printf '%s\n' "${env[@]}" | grep -v '^COLLIDE_TOKEN=' | LC_ALL=C sort -t= -k1,1 |
           while IFS='=' read -r name value; do
             suffix=${name#COLLIDE_}
             echo "--${suffix,,}=$value"
           done)
expected+=$'\n--log_level=debug'
[ "$(cat "$tmp/flags")" = "$expected" ] ||
  fail "the entrypoint passed"$'\n'"$(cat "$tmp/flags")"$'\n'"expected"$'\n'"$expected"
grep -qx -- "--data_dir=/var/lib/collide" "$tmp/flags" || fail "the image's data directory is not --data_dir"

# ---- 5. the entrypoint with the packaged server; the HEALTHCHECK command -------------------------
step "docker/entrypoint.sh running the packaged /usr/bin/collide-server"
start_server "$tmp/port" "$tmp/server.log" env -i "PATH=$tmp/root/usr/bin:/usr/bin:/bin" \
  COLLIDE_ADDRESS=127.0.0.1:0 COLLIDE_PORT_FILE="$tmp/port" COLLIDE_DATA_DIR="$tmp/data" \
  COLLIDE_LOG_LEVEL=warn "$entrypoint"
echo "serving on $address"
# The HEALTHCHECK's command, with the packaged probe and the server's port.
mapfile -t health < <(grep -oE '^HEALTHCHECK .* CMD (\[.*\])$' <<<"$runtime_stage" | sed -E 's/.* CMD //' |
                      /usr/bin/python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)))')
[ ${#health[@]} -gt 0 ] || fail "no HEALTHCHECK CMD in the runtime stage"
health[0]=$tmp/root${health[0]}
for i in "${!health[@]}"; do health[i]=${health[i]/127.0.0.1:50051/$address}; done
echo "+ ${health[*]#"$tmp/root"}"
"${health[@]}" || fail "the HEALTHCHECK command did not report SERVING"
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
[ $status -eq 0 ] || fail "collide-server exited $status after SIGTERM: $(cat "$tmp/server.log")"
[ -d "$tmp/data" ] || fail "COLLIDE_DATA_DIR was not the server's data directory"
echo "docker package test: ok"
