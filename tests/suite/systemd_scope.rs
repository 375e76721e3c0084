//! Transient scopes, end to end.
//!
//! `real_*` tests run against the real systemd user manager (see `support::real_manager`;
//! they fail, loudly, when none is reachable). `mock_*` and `bus_*` tests run against a
//! private `dbus-daemon`, with or without a mock `org.freedesktop.systemd1.Manager`.

use crate::support::dbus_daemon::DbusDaemon;
use crate::support::mock_manager::{Behavior, MockManager};
use crate::support::real_manager;
use hermes_cron::clock::{elapsed, monotonic};
use hermes_cron::systemd::{
    BusCause, BusEnv, ScopeSpec, UnitManager, ZbusTimeouts, ZbusUnitManager, locate_bus,
    scope_unit_name,
};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use zbus::OwnedVariant;

const HOSTILE: &str = "it's a ;hostile/../job\nname ☕ $(id) \\x41";

/// A child process killed and reaped when the test ends, whatever happens.
struct ChildGuard(Child);

impl ChildGuard {
    fn sleeper() -> ChildGuard {
        ChildGuard(
            Command::new("sleep")
                .arg("30")
                .stdin(Stdio::null())
                .spawn()
                .expect("spawn sleep"),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Polls until the child exits (it is our child: this reaps it).
    async fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = monotonic();
        loop {
            if let Some(status) = self.0.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                elapsed(start) < limit,
                "child did not exit within {limit:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn execution_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn spec_for(name: &str, pid: u32) -> ScopeSpec {
    ScopeSpec {
        name: name.to_owned(),
        description: format!("hermes-cron test\n{HOSTILE}"),
        pids: vec![pid],
        ..ScopeSpec::default()
    }
}

fn my_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

fn short_timeouts() -> ZbusTimeouts {
    ZbusTimeouts {
        method: Duration::from_millis(1000),
        job: Duration::from_millis(1500),
    }
}

/// A private bus (in its own temp dir), a mock manager on it, and a client for it with
/// `timeouts` (short only where a test waits for a timeout: the rest must not flake on a
/// loaded machine).
async fn mock_setup(
    behavior: Behavior,
    timeouts: ZbusTimeouts,
) -> (tempfile::TempDir, DbusDaemon, MockManager, ZbusUnitManager) {
    let dir = tempfile::tempdir().unwrap();
    let daemon = DbusDaemon::start(dir.path());
    let mock = MockManager::serve(daemon.address(), behavior).await;
    let client = ZbusUnitManager::new(BusEnv::with_address(daemon.address(), my_uid()), timeouts);
    (dir, daemon, mock, client)
}

fn u64_of(v: &OwnedVariant) -> u64 {
    u64::try_from(v.clone()).expect("t")
}

// ---------------------------------------------------------------------------------------
// Against the real user manager.

#[tokio::test]
async fn real_scope_holds_the_pid_until_stopped() {
    let manager = real_manager::connect().await;
    let env = real_manager::bus_env();
    let mut child = ChildGuard::sleeper();
    let name = scope_unit_name(HOSTILE, &execution_id());
    let spec = ScopeSpec {
        runtime_max: Some(Duration::from_secs(300)),
        memory_max: Some(256 << 20),
        cpu_weight: Some(50),
        tasks_max: Some(64),
        ..spec_for(&name, child.pid())
    };

    manager.start_scope(&spec).await.expect("start_scope");

    let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", child.pid())).unwrap();
    let systemd_lines: Vec<&str> = cgroup
        .lines()
        .filter(|l| l.starts_with("0::") || l.contains(":name=systemd:"))
        .collect();
    assert!(!systemd_lines.is_empty(), "{cgroup}");
    for line in systemd_lines {
        assert!(line.ends_with(&format!("/{name}")), "{line} in\n{cgroup}");
    }

    let procs = manager.unit_processes(&name).await.unwrap().expect("unit");
    assert!(
        procs.iter().any(|(_, pid, _)| *pid == child.pid()),
        "{procs:?}"
    );

    let shown = real_manager::show(
        &env,
        &name,
        &[
            "Id",
            "RuntimeMaxUSec",
            "MemoryMax",
            "TasksMax",
            "CPUWeight",
            "CollectMode",
            "Description",
        ],
    );
    let get = |k: &str| shown.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("Id"), Some(name.as_str()));
    assert_eq!(get("RuntimeMaxUSec"), Some("5min"));
    assert_eq!(get("MemoryMax"), Some("268435456"));
    assert_eq!(get("TasksMax"), Some("64"));
    assert_eq!(get("CPUWeight"), Some("50"));
    assert_eq!(get("CollectMode"), Some("inactive-or-failed"));
    let description = get("Description").unwrap();
    assert!(description.starts_with("hermes-cron test it's a ;hostile"));
    assert!(!description.contains('\n'));

    manager.stop_unit(&name).await.expect("stop_unit");
    let status = child.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");

    // AddRef=true pins the stopped scope for our connection: still known, no processes.
    assert_eq!(manager.unit_processes(&name).await.unwrap(), Some(vec![]));
    // Released, it is collected (CollectMode=inactive-or-failed): NoSuchUnit.
    manager.release_unit(&name).await.expect("release_unit");
    let start = monotonic();
    while manager.unit_processes(&name).await.unwrap().is_some() {
        assert!(
            elapsed(start) < Duration::from_secs(10),
            "{name} not collected"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Stopping or releasing a unit that no longer exists is fine.
    manager.stop_unit(&name).await.expect("stop of a gone unit");
    manager
        .release_unit(&name)
        .await
        .expect("release of a gone unit");
}

#[tokio::test]
async fn real_same_name_twice_is_unit_exists() {
    let manager = real_manager::connect().await;
    let (first, second) = (ChildGuard::sleeper(), ChildGuard::sleeper());
    let name = scope_unit_name("twice", &execution_id());
    manager
        .start_scope(&spec_for(&name, first.pid()))
        .await
        .unwrap();
    let err = manager
        .start_scope(&spec_for(&name, second.pid()))
        .await
        .unwrap_err();
    assert_eq!(
        err.error_name(),
        Some("org.freedesktop.systemd1.UnitExists"),
        "{err}"
    );
    manager.stop_unit(&name).await.unwrap();
}

#[tokio::test]
async fn real_reaped_pid_is_unix_process_id_unknown() {
    let manager = real_manager::connect().await;
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let name = scope_unit_name("reaped", &execution_id());
    let err = manager
        .start_scope(&spec_for(&name, pid))
        .await
        .unwrap_err();
    assert_eq!(
        err.error_name(),
        Some("org.freedesktop.DBus.Error.UnixProcessIdUnknown"),
        "{err}"
    );
    assert_eq!(err.code().as_str(), "call_refused");
}

#[tokio::test]
async fn real_unknown_unit_has_no_processes_and_stops_fine() {
    let manager = real_manager::connect().await;
    let name = scope_unit_name("never-started", &execution_id());
    assert_eq!(manager.unit_processes(&name).await.unwrap(), None);
    manager.stop_unit(&name).await.unwrap();
}

#[tokio::test]
async fn real_concurrent_starts_share_one_connection() {
    let manager: Arc<dyn UnitManager> = Arc::new(real_manager::connect().await);
    let children: Vec<ChildGuard> = (0..4).map(|_| ChildGuard::sleeper()).collect();
    let names: Vec<String> = (0..4)
        .map(|i| scope_unit_name(&format!("parallel {i}"), &execution_id()))
        .collect();
    let mut tasks = Vec::new();
    for (name, child) in names.iter().zip(&children) {
        let manager = manager.clone();
        let spec = spec_for(name, child.pid());
        tasks.push(tokio::spawn(
            async move { manager.start_scope(&spec).await },
        ));
    }
    for task in tasks {
        task.await.unwrap().expect("parallel start");
    }
    for name in &names {
        manager.stop_unit(name).await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Against a mock manager on a private bus.

#[tokio::test]
async fn mock_records_properties_and_reuses_the_connection() {
    let (_dir, _daemon, mock, client) = mock_setup(Behavior::Done, ZbusTimeouts::default()).await;
    let spec = ScopeSpec {
        runtime_max: Some(Duration::from_secs(3660)),
        memory_max: Some(1 << 30),
        cpu_weight: Some(200),
        tasks_max: Some(32),
        ..spec_for("hermes-cron-x-1.scope", 4242)
    };
    client.start_scope(&spec).await.expect("start_scope");

    let starts = mock.starts();
    assert_eq!(starts.len(), 1);
    let call = &starts[0];
    assert_eq!(call.name, "hermes-cron-x-1.scope");
    assert_eq!(call.mode, "fail");
    assert_eq!(call.aux_len, 0);
    let pids = Vec::<u32>::try_from(call.property("PIDs").unwrap().clone()).unwrap();
    assert_eq!(pids, [4242]);
    let collect = String::try_from(call.property("CollectMode").unwrap().clone()).unwrap();
    assert_eq!(collect, "inactive-or-failed");
    assert!(bool::try_from(call.property("AddRef").unwrap().clone()).unwrap());
    let description = String::try_from(call.property("Description").unwrap().clone()).unwrap();
    assert!(
        !description.chars().any(char::is_control),
        "{description:?}"
    );
    assert_eq!(
        u64_of(call.property("RuntimeMaxUSec").unwrap()),
        3_660_000_000
    );
    assert_eq!(u64_of(call.property("MemoryMax").unwrap()), 1 << 30);
    assert_eq!(u64_of(call.property("CPUWeight").unwrap()), 200);
    assert_eq!(u64_of(call.property("TasksMax").unwrap()), 32);

    let procs = client.unit_processes(&spec.name).await.unwrap().unwrap();
    assert_eq!(procs[0].1, 4242);
    client.release_unit(&spec.name).await.unwrap(); // NotReferenced is fine
    client.stop_unit(&spec.name).await.unwrap();
    assert_eq!(client.unit_processes(&spec.name).await.unwrap(), None);
    client.stop_unit(&spec.name).await.unwrap();
    client.probe().await.unwrap();

    assert_eq!(
        mock.methods(),
        [
            "StartTransientUnit",
            "GetUnitProcesses",
            "UnrefUnit",
            "StopUnit",
            "GetUnitProcesses",
            "StopUnit",
            "GetUnit"
        ]
    );
    let senders = mock.senders();
    assert!(
        senders.iter().all(|s| s == &senders[0]),
        "one connection for all calls: {senders:?}"
    );
}

/// The bus daemon's own count of match rules a connection ever held at once
/// (`org.freedesktop.DBus.Debug.Stats.GetConnectionStats`, `PeakMatchRules`).
async fn peak_match_rules(address: &str, unique_name: &str) -> u32 {
    let conn = zbus::connection::Builder::address(address)
        .build()
        .await
        .unwrap();
    let reply = conn
        .call_method(
            Some("org.freedesktop.DBus"),
            "/org/freedesktop/DBus",
            Some("org.freedesktop.DBus.Debug.Stats"),
            "GetConnectionStats",
            &(unique_name,),
        )
        .await
        .expect("the test bus keeps statistics");
    let stats: std::collections::HashMap<String, OwnedVariant> =
        reply.body().deserialize().unwrap();
    u32::try_from(stats["PeakMatchRules"].clone()).unwrap()
}

#[tokio::test]
async fn mock_starts_share_one_job_removed_subscription_per_connection() {
    let (_dir, daemon, mock, client) = mock_setup(Behavior::Done, ZbusTimeouts::default()).await;
    let client = Arc::new(client);
    // Eight starts at once, then eight more one by one: one stream per start
    // would hold eight match rules at once (and add and remove sixteen).
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .start_scope(&spec_for(&format!("c{i}.scope"), 1))
                    .await
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().expect("concurrent start");
    }
    for i in 0..8 {
        client
            .start_scope(&spec_for(&format!("s{i}.scope"), 1))
            .await
            .expect("sequential start");
    }
    let senders = mock.senders();
    assert!(senders.iter().all(|s| s == &senders[0]), "{senders:?}");
    let peak = peak_match_rules(daemon.address(), &senders[0]).await;
    // One JobRemoved rule (and at most one zbus adds to follow the name's owner).
    assert!(peak <= 2, "the connection held {peak} match rules at once");
}

/// One `start_scope` of `a.scope` against a mock answering with `behavior`: the mock (for
/// its records), the result, and how long the call took.
async fn start_against_mock(
    behavior: Behavior,
    timeouts: ZbusTimeouts,
) -> (MockManager, Result<(), BusCause>, Duration) {
    let (_dir, _daemon, mock, client) = mock_setup(behavior, timeouts).await;
    let start = monotonic();
    let result = client.start_scope(&spec_for("a.scope", 1)).await;
    (mock, result, elapsed(start))
}

#[tokio::test]
async fn mock_unit_exists_is_call_refused() {
    let (_mock, result, _) =
        start_against_mock(Behavior::RefuseUnitExists, ZbusTimeouts::default()).await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, BusCause::CallRefused { error_name, .. }
            if error_name == "org.freedesktop.systemd1.UnitExists"),
        "{err:?}"
    );
}

#[tokio::test]
async fn mock_failed_job_is_job_failed() {
    let (mock, result, _) = start_against_mock(Behavior::FailJob, ZbusTimeouts::default()).await;
    assert_eq!(
        result,
        Err(BusCause::JobFailed {
            unit: "a.scope".into(),
            result: "failed".into()
        })
    );
    // The failed unit's AddRef reference is dropped so systemd can collect it.
    assert_eq!(mock.methods(), ["StartTransientUnit", "UnrefUnit"]);
}

#[tokio::test]
async fn mock_missing_job_removed_times_out() {
    let (mock, result, took) = start_against_mock(Behavior::NeverSignal, short_timeouts()).await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, BusCause::Timeout { what } if what.contains("JobRemoved")),
        "{err:?}"
    );
    assert_eq!(mock.methods(), ["StartTransientUnit", "UnrefUnit"]);
    assert!(
        took >= short_timeouts().job / 2 && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[tokio::test]
async fn mock_job_removed_before_reply_still_succeeds() {
    let (mock, result, _) =
        start_against_mock(Behavior::SignalBeforeReply, ZbusTimeouts::default()).await;
    result.expect("signal before reply");
    assert_eq!(mock.methods(), ["StartTransientUnit"]);
}

#[tokio::test]
async fn mock_no_reply_hits_the_method_timeout() {
    let (_mock, result, took) = start_against_mock(Behavior::NeverReply, short_timeouts()).await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, BusCause::Timeout { what } if what.contains("StartTransientUnit")),
        "{err:?}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[tokio::test]
async fn mock_restarted_bus_is_reconnected_once() {
    let dir = tempfile::tempdir().unwrap();
    let env;
    let first_sender;
    let client;
    {
        let daemon = DbusDaemon::start(dir.path());
        let mock = MockManager::serve(daemon.address(), Behavior::Done).await;
        env = BusEnv::with_runtime_dir(dir.path(), my_uid());
        client = ZbusUnitManager::new(env, ZbusTimeouts::default());
        client.probe().await.unwrap();
        first_sender = mock.senders()[0].clone();
    } // the bus and the mock go away
    let daemon = DbusDaemon::start(dir.path());
    let mock = MockManager::serve(daemon.address(), Behavior::Done).await;
    client.probe().await.expect("reconnected");
    client.start_scope(&spec_for("b.scope", 7)).await.unwrap();
    // The new bus saw both calls, from one (new) connection.
    let senders = mock.senders();
    assert_eq!(senders.len(), 2, "{senders:?}");
    assert_eq!(senders[0], senders[1]);
    assert!(!first_sender.is_empty());
}

// ---------------------------------------------------------------------------------------
// Without a manager, or without a bus.

#[tokio::test]
async fn bus_without_manager_is_no_systemd() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = DbusDaemon::start(dir.path());
    let client = ZbusUnitManager::new(
        BusEnv::with_address(daemon.address(), my_uid()),
        short_timeouts(),
    );
    let err = client.probe().await.unwrap_err();
    assert_eq!(err.code().as_str(), "no_systemd", "{err:?}");
    assert!(err.is_unavailable());
    let err = client
        .start_scope(&spec_for("a.scope", 1))
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "no_systemd", "{err:?}");
    assert!(err.to_string().contains("loginctl enable-linger"), "{err}");
}

#[tokio::test]
async fn bus_socket_missing_is_socket_missing() {
    let dir = tempfile::tempdir().unwrap();
    let client = ZbusUnitManager::new(
        BusEnv::with_runtime_dir(dir.path(), my_uid()),
        short_timeouts(),
    );
    let err = client
        .start_scope(&spec_for("a.scope", 1))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        BusCause::SocketMissing {
            path: dir.path().join("bus")
        }
    );
    let nothing = ZbusUnitManager::new(
        BusEnv {
            uid: my_uid(),
            ..BusEnv::default()
        },
        short_timeouts(),
    );
    assert_eq!(nothing.probe().await.unwrap_err(), BusCause::NoAddress);
}

/// A unix socket bound to `path` on which nobody ever calls `listen()`.
fn bind_without_listen(path: &Path) -> OwnedFd {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: plain socket(2)/bind(2) on a zeroed sockaddr_un whose path fits (checked).
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        assert!(bytes.len() < addr.sun_path.len(), "socket path too long");
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        let len = (std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1) as libc::socklen_t;
        let rc = libc::bind(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            &addr as *const libc::sockaddr_un as *const libc::sockaddr,
            len,
        );
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        fd
    }
}

#[tokio::test]
async fn bus_socket_not_listening_is_connection_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _socket = bind_without_listen(&dir.path().join("bus"));
    let client = ZbusUnitManager::new(
        BusEnv::with_runtime_dir(dir.path(), my_uid()),
        short_timeouts(),
    );
    let err = client
        .start_scope(&spec_for("a.scope", 1))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, BusCause::ConnectionRefused { address } if address.contains(dir.path().to_str().unwrap())),
        "{err:?}"
    );
}

#[test]
fn bus_socket_of_another_user_is_wrong_owner() {
    const NOBODY: u32 = 65534;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("bus");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::os::unix::fs::chown(&socket, Some(NOBODY), None)
        .expect("chown needs root: these tests run as root (tests/run-all.sh)");

    let via_address = BusEnv::with_address(format!("unix:path={}", socket.display()), my_uid());
    assert_eq!(
        locate_bus(&via_address),
        Err(BusCause::WrongOwner {
            path: socket.clone(),
            owner: NOBODY,
            uid: my_uid()
        })
    );
    let via_runtime_dir = BusEnv::with_runtime_dir(dir.path(), my_uid());
    assert!(matches!(
        locate_bus(&via_runtime_dir),
        Err(BusCause::WrongOwner { path, owner: NOBODY, .. }) if path == socket
    ));

    std::os::unix::fs::chown(dir.path(), Some(NOBODY), None).unwrap();
    assert_eq!(
        locate_bus(&via_runtime_dir),
        Err(BusCause::WrongOwner {
            path: dir.path().to_owned(),
            owner: NOBODY,
            uid: my_uid()
        })
    );
}
