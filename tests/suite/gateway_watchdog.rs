//! The loop watchdog: a wedged event loop makes the gateway exit 75 with a
//! forensic dump and a lifecycle line; disabled, the gateway stays up and
//! still stops on SIGTERM.

use crate::support::TestHome;
use crate::support::gateway::Gateway;
use nix::sys::signal::Signal;
use std::fs;
use std::time::Duration;

const WEDGE: (&str, &str) = ("HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS", "500");
const FAST_WATCHDOG: &str = "gateway.loop_watchdog_probe_interval_s: 1
gateway.loop_watchdog_probe_timeout_s: 1
gateway.loop_watchdog_max_strikes: 2
";

fn wedged_gateway(h: &TestHome) -> Gateway {
    let mut gw = h.gateway(&[WEDGE]);
    gw.wait_ready();
    gw.wait_log(
        "blocking the event loop thread now",
        Duration::from_secs(20),
    );
    gw
}

/// Wedged loop, watchdog on (1 s probes, 1 s timeout, 2 strikes): exit 75,
/// a dump in logs/ listing every thread (name, state, wait channel), and a
/// lifecycle line `loop_liveness_watchdog`.
#[test]
fn wedged_loop_exits_75_with_dump_and_lifecycle_line() {
    let h = TestHome::scoped();
    h.write_config(FAST_WATCHDOG);
    let mut gw = wedged_gateway(&h);
    // Expected after about interval x strikes + timeout (3 s); generous deadline.
    let status = gw.wait_exit(Duration::from_secs(60));
    assert_eq!(status.code(), Some(75), "{status}\n{}", gw.log());

    let dumps: Vec<_> = fs::read_dir(h.path().join("logs"))
        .expect("logs/ exists")
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("hermes-cron-watchdog-")
        })
        .collect();
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    let dump = fs::read_to_string(dumps[0].path()).unwrap();
    let threads: usize = dump
        .lines()
        .find_map(|l| l.strip_prefix("threads: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no thread count in the dump:\n{dump}"));
    let sections: Vec<&str> = dump.split("\n--- thread ").skip(1).collect();
    assert_eq!(sections.len(), threads, "{dump}");
    assert!(
        threads >= 3,
        "runtime, heartbeat and watchdog threads:\n{dump}"
    );
    for sec in &sections {
        let name = sec.lines().next().unwrap_or_default();
        assert!(name.contains('"'), "thread without a name: {sec}");
        assert!(sec.contains("\nstate: "), "no state: {sec}");
        assert!(sec.contains("\nwchan: "), "no wait channel: {sec}");
    }
    for name in ["\"loop-watchdog\"", "\"heartbeat\""] {
        assert!(
            sections
                .iter()
                .any(|s| s.lines().next().unwrap().contains(name)),
            "no {name} thread in the dump:\n{dump}"
        );
    }
    assert!(dump.contains("loop was last doing: "), "{dump}");

    let life = h.lifecycle();
    let last = life.last().expect("lifecycle lines");
    assert_eq!(last["event"], "exit", "{life:?}");
    assert_eq!(last["reason"], "loop_liveness_watchdog", "{life:?}");
    assert_eq!(last["exit_code"], 75, "{life:?}");
    assert_eq!(last["pid"], gw.pid(), "{life:?}");
}

/// Wedged loop, `gateway.loop_watchdog: false`: still running well after the
/// watchdog would have fired, and SIGTERM still ends it with exit 0.
#[test]
fn wedged_loop_with_watchdog_disabled_stays_up_and_answers_sigterm() {
    let h = TestHome::scoped();
    h.write_config(&format!("{FAST_WATCHDOG}gateway.loop_watchdog: false\n"));
    let mut gw = wedged_gateway(&h);
    // Twice the time the enabled watchdog needs (interval x strikes + timeout).
    std::thread::sleep(Duration::from_secs(6));
    assert!(gw.exited().is_none(), "the gateway exited:\n{}", gw.log());
    assert!(
        !h.path().join("logs").exists()
            || fs::read_dir(h.path().join("logs"))
                .unwrap()
                .next()
                .is_none(),
        "a dump was written with the watchdog disabled"
    );

    gw.signal(Signal::SIGTERM);
    let status = gw.wait_exit(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "{status}\n{}", gw.log());
    let life = h.lifecycle();
    let last = life.last().expect("lifecycle lines");
    assert_eq!(last["event"], "exit", "{life:?}");
    assert_eq!(last["reason"], "signal", "{life:?}");
    assert_eq!(last["exit_code"], 0, "{life:?}");
    assert!(gw.log().contains("wedged"), "{}", gw.log());
}
