//! Gateway restarts against the real systemd user manager: scoped runs
//! survive and are adopted by the next gateway; degraded runs die with the old
//! gateway's cgroup and are recorded `unknown` with the reason.

use crate::support::gateway::Service;
use crate::support::rows::s;
use crate::support::{TestHome, wait_for};
use nix::sys::signal::Signal;
use std::collections::HashSet;
use std::fs;
use std::time::Duration;

/// The part of a service log written by the gateway process `pid`: from its
/// "gateway starting ... pid=PID" line to the next start.
fn log_of_pid(log: &str, pid: u32) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in log.lines() {
        if line.contains("gateway starting") {
            inside = line.contains(&format!("pid={pid}"));
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// THE HEADLINE TEST (issue 5): two gateways as transient user services,
/// one with the bus (its 15 s job runs scoped) and one with the bus hidden
/// (its job runs degraded); both are restarted mid-run. The scoped run
/// finishes, is adopted by the new gateway and its row is `succeeded` with
/// its complete output, written by its worker; the degraded run died with
/// the old gateway's cgroup and its row is `unknown` (`gateway_restart`).
/// Also: `READY=1` (systemd-run and restart return only after it) and a
/// `STATUS=` line (`StatusText`).
#[test]
fn headline_restart_mid_run_scoped_survives_degraded_is_unknown() {
    let a = TestHome::scoped();
    let b = TestHome::scoped();
    let no_runtime = b.scratch().join("empty-runtime-dir");
    fs::create_dir(&no_runtime).unwrap();
    let no_runtime = no_runtime.display().to_string();

    let svc_a = Service::start(&a, "a", &[]);
    let svc_b = Service::start(
        &b,
        "b",
        &[
            ("DBUS_SESSION_BUS_ADDRESS", ""),
            ("XDG_RUNTIME_DIR", no_runtime.as_str()),
        ],
    );
    let (old_a, old_b) = (svc_a.main_pid(), svc_b.main_pid());
    assert!(old_a > 0 && old_b > 0, "services have no main pid");

    // sd_notify: both said READY=1 (or systemd-run would still be waiting)
    // and keep a one-line status.
    for (svc, mode) in [(&svc_a, "dispatch scoped"), (&svc_b, "dispatch degraded")] {
        assert_eq!(svc.show("ActiveState"), "active", "{}", svc.log());
        let status = wait_for(
            &format!("a StatusText on {} naming {mode:?}", svc.unit),
            Duration::from_secs(10),
            || Some(svc.show("StatusText")).filter(|t| t.contains(mode)),
        );
        assert!(!status.contains('\n'), "{status:?}");
    }

    // 15 s of output, then (so the restart surely falls mid-run, however
    // loaded the machine) it waits for the test to open a gate.
    let gate = a.scratch().join("gate");
    let long = format!(
        r#"for i in $(seq 1 15); do echo "line $i"; sleep 1; done; while [ ! -e {} ]; do sleep 0.1; done; echo complete"#,
        gate.display()
    );
    a.add("long", "in 1s", &[], &["sh", "-c", &long]);
    b.add(
        "doomed",
        "in 1s",
        &[],
        &["sh", "-c", "echo started; sleep 120; echo never"],
    );

    let running = |h: &TestHome, name: &str| {
        h.runs_of(name)
            .into_iter()
            .find(|r| r["state"] == "running")
    };
    let row_a = a.wait_until(
        "the scoped run to be running",
        Duration::from_secs(30),
        || running(&a, "long"),
    );
    let row_b = b.wait_until(
        "the degraded run to be running",
        Duration::from_secs(30),
        || running(&b, "doomed"),
    );
    assert_eq!(row_a["dispatch_mode"], "scoped", "{row_a}");
    assert!(s(&row_a, "unit").ends_with(".scope"), "{row_a}");
    assert_eq!(row_b["dispatch_mode"], "degraded", "{row_b}");
    assert_eq!(row_b["dispatch_cause"], "socket_missing", "{row_b}");
    let (id_a, id_b) = (s(&row_a, "id"), s(&row_b, "id"));
    let output_a = s(&row_a, "output_path");

    // Mid-run: the scoped job has produced some output, not all of it.
    a.wait_until(
        "the scoped job's third line",
        Duration::from_secs(20),
        || {
            fs::read_to_string(&output_a)
                .ok()
                .filter(|o| o.contains("line 3"))
        },
    );

    svc_a.restart();
    svc_b.restart();
    let (new_a, new_b) = (svc_a.main_pid(), svc_b.main_pid());
    assert!(new_a > 0 && new_a != old_a, "gateway A was not restarted");
    assert!(new_b > 0 && new_b != old_b, "gateway B was not restarted");
    assert!(
        !fs::read_to_string(&output_a).unwrap().contains("complete"),
        "the scoped job finished before the restart; the test proves nothing"
    );
    fs::write(&gate, b"").unwrap();

    // The degraded run died with the old gateway's cgroup; the new gateway's
    // startup sweep says so.
    let dead = b.wait_terminal(&id_b, Duration::from_secs(30));
    assert_eq!(dead["state"], "unknown", "{dead}");
    assert_eq!(dead["reason_code"], "gateway_restart", "{dead}");
    let reason = s(&dead, "reason");
    assert!(
        reason.contains("gateway") && reason.contains(&format!("pid {old_b}")),
        "{reason}"
    );
    assert!(
        log_of_pid(&svc_b.log(), new_b).contains(&id_b),
        "the new gateway B did not log the resolution:\n{}",
        svc_b.log()
    );

    // The scoped run survived, was adopted by the new gateway and finished.
    let new_log = || log_of_pid(&svc_a.log(), new_a);
    assert!(
        new_log()
            .lines()
            .any(|l| l.contains("adopted") && l.contains(&id_a)),
        "the new gateway A did not adopt {id_a}:\n{}",
        svc_a.log()
    );
    let done = a.wait_terminal(&id_a, Duration::from_secs(60));
    assert_eq!(done["state"], "succeeded", "{done}\n{}", a.diag());
    assert_eq!(done["exit_code"], 0, "{done}");
    assert!(done["duration_ms"].as_u64().unwrap() >= 14_000, "{done}");
    let output = fs::read_to_string(&output_a).unwrap();
    let expected: String = (1..=15)
        .map(|i| format!("line {i}\n"))
        .chain(["complete\n".to_string()])
        .collect();
    assert_eq!(output, expected);
    assert_eq!(done["output_bytes"], expected.len() as u64, "{done}");
    assert_eq!(done["output_truncated"], false, "{done}");
    wait_for(
        "the new gateway to log the adopted run's end",
        Duration::from_secs(15),
        || {
            new_log()
                .lines()
                .any(|l| l.contains("adopted run finished") && l.contains(&id_a))
                .then_some(())
        },
    );

    // Each restart is two lifecycle lines (exit: signal; start).
    for h in [&a, &b] {
        let life = h.lifecycle();
        let exits: Vec<_> = life.iter().filter(|l| l["event"] == "exit").collect();
        assert!(
            exits
                .iter()
                .any(|l| l["reason"] == "signal" && l["exit_code"] == 0),
            "{life:?}"
        );
        assert_eq!(life.iter().filter(|l| l["event"] == "start").count(), 2);
    }
}

/// SIGKILL of a gateway with 20 scoped runs going, then a new gateway: all 20
/// are adopted, none is `unknown`, none runs twice.
#[test]
fn sigkill_with_twenty_scoped_runs_all_adopted_none_twice() {
    let h = TestHome::scoped();
    let ledger_file = h.scratch().join("ran.txt");
    let gate = h.scratch().join("gate");
    // Each run notes itself, then waits for the test to open the gate (so
    // all 20 are still running when the new gateway sweeps).
    let script = format!(
        r#"echo "$HERMES_CRON_EXECUTION_ID" >> {}; sleep 2; while [ ! -e {} ]; do sleep 0.1; done"#,
        ledger_file.display(),
        gate.display()
    );
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    for i in 0..20 {
        h.add(&format!("j{i:02}"), "in 2s", &[], &["sh", "-c", &script]);
    }
    let rows = h.wait_until("20 running rows", Duration::from_secs(60), || {
        let rows: Vec<_> = h
            .runs(None)
            .into_iter()
            .filter(|r| r["state"] == "running")
            .collect();
        (rows.len() == 20).then_some(rows)
    });
    for r in &rows {
        assert_eq!(r["dispatch_mode"], "scoped", "{r}");
    }
    gw.signal(Signal::SIGKILL);
    gw.wait_exit(Duration::from_secs(10));

    let mut gw2 = h.gateway(&[]);
    gw2.wait_ready();
    let ids: HashSet<String> = rows.iter().map(|r| s(r, "id")).collect();
    for id in &ids {
        assert!(
            gw2.log()
                .lines()
                .any(|l| l.contains("adopted") && l.contains(id.as_str())),
            "{id} not adopted:\n{}",
            gw2.log()
        );
    }
    assert!(gw2.log().contains("adopted=20"), "{}", gw2.log());
    fs::write(&gate, b"").unwrap();
    for id in &ids {
        let row = h.wait_terminal(id, Duration::from_secs(60));
        assert_eq!(row["state"], "succeeded", "{row}");
    }
    let all = h.runs(None);
    assert_eq!(all.len(), 20, "{all:?}");
    assert!(all.iter().all(|r| r["state"] == "succeeded"), "{all:?}");
    let ran = fs::read_to_string(&ledger_file).unwrap();
    let lines: Vec<&str> = ran.lines().collect();
    assert_eq!(lines.len(), 20, "{ran}");
    assert_eq!(lines.iter().collect::<HashSet<_>>().len(), 20, "{ran}");
    assert!(lines.iter().all(|l| ids.contains(*l)), "{ran}");
    assert_eq!(gw2.stop().code(), Some(0));
}
