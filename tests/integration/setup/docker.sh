#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Prepare a real Docker engine for berth's docker tests (idempotent, installs
# nothing: .ci/run apt-installs docker.io busybox-static bash-static
# docker-registry jq).
#  - starts dockerd (--iptables=false --bridge=none) unless one answers;
#  - builds the offline test image berth-test:latest by `docker import` of a
#    rootfs made of static busybox + static bash;
#  - runs Debian's docker-registry on 127.0.0.1:5000 and pushes the image as
#    127.0.0.1:5000/berth-test:latest (for pull tests).
# Environment: BERTH_TEST_STATE (default /var/lib/berth-test).
set -euo pipefail

state=${BERTH_TEST_STATE:-/var/lib/berth-test}
sock=/var/run/docker.sock
registry_addr=127.0.0.1:5000
image=berth-test:latest
say() { printf 'setup/docker: %s\n' "$*"; }
die() { printf 'setup/docker: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
for t in dockerd docker busybox bash-static; do
  command -v "$t" >/dev/null || die "$t not found (apt-get install docker.io busybox-static bash-static docker-registry)"
done
mkdir -p "$state"
# Test scripts call this in parallel (make -j): one at a time.
exec 9>"$state/setup.lock"
flock 9
export DOCKER_HOST=unix://$sock

# ---- TLS material for the tcp:// listener (DOCKER_TLS_VERIFY tests)
tls=$state/tls
if [ ! -f "$tls/client/key.pem" ] && command -v openssl >/dev/null; then
  mkdir -p "$tls/client"
  (
    cd "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=berth-test-ca -keyout ca-key.pem -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server-key.pem -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 -extfile server.ext -out server-cert.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=berth-client -keyout client/key.pem -out client.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 -extfile client.ext -out client/cert.pem 2>/dev/null
    cp ca.pem client/ca.pem
    chmod 0644 client/*.pem
  )
  say "generated TLS certificates in $tls (client: DOCKER_CERT_PATH=$tls/client)"
fi
tls_args=()
[ -f "$tls/server-key.pem" ] && tls_args=(-H tcp://127.0.0.1:2376 --tlsverify --tlscacert "$tls/ca.pem"
  --tlscert "$tls/server-cert.pem" --tlskey "$tls/server-key.pem")
tls_up () {
  curl -fsS --cacert "$tls/ca.pem" --cert "$tls/client/cert.pem" --key "$tls/client/key.pem" https://127.0.0.1:2376/_ping >/dev/null 2>&1
}

# ---- dockerd
if docker version >/dev/null 2>&1 && [ ${#tls_args[@]} -gt 0 ] && ! tls_up \
   && [ -f "$state/dockerd.pid" ] && kill -0 "$(cat "$state/dockerd.pid")" 2>/dev/null; then
  # Ours, but started before the TLS listener existed: restart it.
  say "restarting dockerd to add the TLS listener on 127.0.0.1:2376"
  pid=$(cat "$state/dockerd.pid")
  kill "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
fi
if docker version >/dev/null 2>&1; then
  say "dockerd already answering on $sock"
else
  # A stale pid file from a dead daemon makes dockerd refuse to start.
  if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
    rm -f /var/run/docker.pid
  fi
  if ! pgrep -x containerd >/dev/null && command -v containerd >/dev/null; then
    : # dockerd starts its own managed containerd when none runs
  fi
  say "starting dockerd (log: $state/dockerd.log)"
  setsid dockerd --iptables=false --ip-masq=false --bridge=none \
    -H unix://$sock "${tls_args[@]}" >"$state/dockerd.log" 2>&1 </dev/null 9>&- &
  echo $! >"$state/dockerd.pid"
  for _ in $(seq 1 150); do
    docker version >/dev/null 2>&1 && break
    sleep 0.2
  done
  docker version >/dev/null 2>&1 || { tail -n 20 "$state/dockerd.log" >&2; die "dockerd did not come up"; }
  say "dockerd up ($(docker version --format '{{.Server.Version}} API {{.Server.APIVersion}}'))"
fi
if tls_up; then
  say "TLS listener on tcp://127.0.0.1:2376 (DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$tls/client)"
else
  say "no TLS listener on 127.0.0.1:2376 (dockerd was not started by this script)"
fi

# ---- offline test image
if docker image inspect "$image" >/dev/null 2>&1; then
  say "image $image present"
else
  root=$(mktemp -d "$state/rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,var/tmp,run,home/user,proc,sys,dev}
  chmod 1777 "$root/tmp" "$root/var/tmp"
  chmod 700 "$root/root"
  cp "$(readlink -f "$(command -v busybox)")" "$root/bin/busybox"
  cp "$(readlink -f "$(command -v bash-static)")" "$root/bin/bash"
  for applet in $(busybox --list-full); do
    [ "$applet" = bin/bash ] && continue
    [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  ln -sf bash "$root/bin/sh"
  cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/bash
user:x:1000:1000:user:/home/user:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
  cat >"$root/etc/group" <<'EOF'
root:x:0:
user:x:1000:
nogroup:x:65534:
EOF
  chown 1000:1000 "$root/home/user"
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["/bin/bash"]' - "$image" >/dev/null
  rm -rf "$root"
  trap - EXIT
  say "built $image (busybox-static + bash-static)"
fi

# ---- local registry for pull tests
if curl -fsS "http://$registry_addr/v2/" >/dev/null 2>&1; then
  say "registry already answering on $registry_addr"
elif command -v docker-registry >/dev/null; then
  mkdir -p "$state/registry"
  cat >"$state/registry.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $state/registry
  delete:
    enabled: true
http:
  addr: $registry_addr
EOF
  setsid docker-registry serve "$state/registry.yml" >"$state/registry.log" 2>&1 </dev/null 9>&- &
  echo $! >"$state/registry.pid"
  for _ in $(seq 1 50); do
    curl -fsS "http://$registry_addr/v2/" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fsS "http://$registry_addr/v2/" >/dev/null 2>&1 || die "docker-registry did not come up (see $state/registry.log)"
  say "registry up on $registry_addr"
else
  die "docker-registry not found"
fi
# Two repositories: berth-test for the CLI tests, berth-test-api for the
# HTTP-layer unit test (they run in parallel and delete their local copy).
for repo in berth-test berth-test-api; do
  if curl -fsS "http://$registry_addr/v2/$repo/tags/list" 2>/dev/null | grep -q latest; then
    say "$registry_addr/$repo:latest already pushed"
  else
    docker tag "$image" "$registry_addr/$repo:latest"
    docker push -q "$registry_addr/$repo:latest" >/dev/null
    say "pushed $registry_addr/$repo:latest"
  fi
  # The pull tests need the pushed names absent locally.
  docker rmi "$registry_addr/$repo:latest" >/dev/null 2>&1 || true
done
say "ready"
