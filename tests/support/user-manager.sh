#!/usr/bin/env bash
# A systemd user manager for the scoped tests of the integration suite (tests/suite/;
# see tests/suite/support/real_manager.rs): they need a real `systemd --user` and fail
# loudly without one.
#
#   tests/support/user-manager.sh start   reuse a reachable manager, or boot a private one
#                                         (root only); prints the env exports on stdout
#   tests/support/user-manager.sh env     print the env exports, start nothing
#   tests/support/user-manager.sh stop    stop the manager this script booted (by its pid)
#
# Typical use:  eval "$(tests/support/user-manager.sh start)"; cargo test; tests/support/user-manager.sh stop
#
# The manager is found, and booted, at XDG_RUNTIME_DIR (default /run/user/$UID) with
# DBUS_SESSION_BUS_ADDRESS (default unix:path=$XDG_RUNTIME_DIR/bus). Booting, as root:
#   1. mkdir -m 0700 $XDG_RUNTIME_DIR;
#   2. create the manager's cgroup (HERMES_USER_MANAGER_CGROUP, default
#      user.slice/user-$UID.slice/user@$UID.service) in each hierarchy systemd uses
#      (/sys/fs/cgroup when unified, else /sys/fs/cgroup/systemd and /sys/fs/cgroup/unified)
#      and move the launching shell into it;
#   3. in a new mount namespace (unshare -m, private propagation), a tmpfs on /run/systemd
#      holding an empty /run/systemd/system, so systemd believes it was booted with systemd;
#      the host's /run/systemd is untouched;
#   4. setsid systemd --user, detached (stdio to a log file); it socket-activates the session
#      bus at $XDG_RUNTIME_DIR/bus itself (dbus-user-session), so no dbus-daemon is started;
#   5. ready when `busctl --user status org.freedesktop.systemd1` succeeds (polled, ~10 s).
# The manager's pid (as the bus reports it) goes to $XDG_RUNTIME_DIR/hermes-cron-user-manager.pid;
# `stop` kills only that pid, so a manager this script merely reused is never stopped.
set -euo pipefail

uid=$(id -u)
runtime_dir=${XDG_RUNTIME_DIR:-/run/user/$uid}
bus_address=${DBUS_SESSION_BUS_ADDRESS:-unix:path=$runtime_dir/bus}
cgroup=${HERMES_USER_MANAGER_CGROUP:-user.slice/user-$uid.slice/user@$uid.service}
pidfile=$runtime_dir/hermes-cron-user-manager.pid
logfile=$runtime_dir/hermes-cron-user-manager.log
export XDG_RUNTIME_DIR=$runtime_dir DBUS_SESSION_BUS_ADDRESS=$bus_address

say() { printf 'user-manager.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

print_env() {
    printf 'export XDG_RUNTIME_DIR=%q\n' "$XDG_RUNTIME_DIR"
    printf 'export DBUS_SESSION_BUS_ADDRESS=%q\n' "$DBUS_SESSION_BUS_ADDRESS"
}

reachable() { busctl --user status org.freedesktop.systemd1 >/dev/null 2>&1; }

manager_pid() { busctl --user status org.freedesktop.systemd1 2>/dev/null | sed -n 's/^PID=//p'; }

systemd_binary() {
    local b
    for b in /lib/systemd/systemd /usr/lib/systemd/systemd; do
        [ -x "$b" ] && { echo "$b"; return; }
    done
    die "no systemd binary: apt-get install -y systemd dbus dbus-user-session"
}

cgroup_hierarchies() {
    if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        echo /sys/fs/cgroup
        return
    fi
    local h found=0
    for h in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
        if mountpoint -q "$h"; then
            echo "$h"
            found=1
        fi
    done
    [ "$found" = 1 ] || die "no systemd cgroup hierarchy under /sys/fs/cgroup"
}

boot() {
    [ "$uid" = 0 ] || die "no user manager reachable at $DBUS_SESSION_BUS_ADDRESS, and only root can boot a private one; log in with a normal session or run as root"
    local systemd hierarchies h
    systemd=$(systemd_binary)
    [ -e /usr/lib/systemd/user/dbus.socket ] \
        || die "dbus-user-session is missing (no user dbus.socket): apt-get install -y dbus dbus-user-session"
    hierarchies=$(cgroup_hierarchies)

    mkdir -p "$runtime_dir"
    chmod 0700 "$runtime_dir"
    for h in $hierarchies; do mkdir -p "$h/$cgroup"; done

    # The subshell moves itself into the cgroups, then becomes the manager (exec all the way).
    (
        for h in $hierarchies; do echo "$BASHPID" >"$h/$cgroup/cgroup.procs"; done
        exec setsid unshare -m --propagation private sh -c \
            'mount -t tmpfs -o mode=0755 tmpfs /run/systemd && mkdir /run/systemd/system && exec "$0" --user' \
            "$systemd"
    ) </dev/null >"$logfile" 2>&1 &
    local launcher=$!

    local tries=0
    until reachable; do
        tries=$((tries + 1))
        if ! kill -0 "$launcher" 2>/dev/null; then
            die "systemd --user exited before its bus came up; its output: $(cat "$logfile")"
        fi
        [ "$tries" -lt 100 ] || die "systemd --user (pid $launcher) not reachable after 10 s; see $logfile"
        sleep 0.1
    done
    manager_pid >"$pidfile"
    say "booted systemd --user (pid $(cat "$pidfile")) at $XDG_RUNTIME_DIR in ${tries}00 ms"
}

start() {
    if reachable; then
        say "reusing the user manager already at $DBUS_SESSION_BUS_ADDRESS (pid $(manager_pid))"
    else
        boot
    fi
    print_env
}

stop() {
    if [ ! -s "$pidfile" ]; then
        say "no manager booted by this script at $XDG_RUNTIME_DIR (nothing to stop)"
        return 0
    fi
    local pid i
    pid=$(cat "$pidfile")
    # A stale pid file must not kill an unrelated process that reused the pid.
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ]; then
        kill -TERM "$pid"
        for i in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "pid $pid ignored SIGTERM for 10 s, sending SIGKILL"
            kill -KILL "$pid"
        fi
    fi
    rm -f "$pidfile"
    say "stopped systemd --user (pid $pid)"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    env) print_env ;;
    *) die "usage: $0 start|stop|env" ;;
esac
