//! The machine a run happened on, for the lines above the table.

use std::path::Path;
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `/proc/loadavg`'s first three fields.
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

/// The 1-minute load average.
pub(crate) fn load1() -> f64 {
    load()
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

fn cpu_model() -> String {
    run("lscpu", &[])
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Model name:").map(|m| m.trim().to_string()))
        })
        .unwrap_or_else(|| "?".into())
}

fn memory() -> String {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let kib: u64 = l
                    .strip_prefix("MemTotal:")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()?;
                Some(format!("{:.1} GiB RAM", kib as f64 / 1024.0 / 1024.0))
            })
        })
        .unwrap_or_else(|| "?".into())
}

fn disk(dir: &Path) -> String {
    let dir = dir.to_string_lossy();
    let Some(found) = run("findmnt", &["-no", "SOURCE,FSTYPE", "-T", &dir]) else {
        return "?".into();
    };
    let mut parts = found.split_whitespace();
    let (source, fstype) = (parts.next().unwrap_or("?"), parts.next().unwrap_or("?"));
    let dev = source.trim_start_matches("/dev/");
    let base: String = dev.trim_end_matches(|c: char| c.is_ascii_digit()).into();
    let rota = std::fs::read_to_string(format!("/sys/block/{base}/queue/rotational"))
        .ok()
        .map(|r| {
            if r.trim() == "0" {
                "non-rotational"
            } else {
                "rotational"
            }
        })
        .unwrap_or("?");
    let model = std::fs::read_to_string(format!("/sys/block/{base}/device/model"))
        .ok()
        .map(|m| format!(", {}", m.trim()))
        .unwrap_or_default();
    let virtio = if base.starts_with("vd") {
        ", virtio"
    } else {
        ""
    };
    format!("{source} ({fstype}, {rota}{virtio}{model})")
}

/// One markdown bullet per fact.
pub(crate) fn describe(work: &Path, profile: &str, manager: &str) -> String {
    let nproc = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".into());
    let kernel = run("uname", &["-r"]).unwrap_or_else(|| "?".into());
    let systemd = run("systemctl", &["--version"])
        .and_then(|t| t.lines().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        })
        .unwrap_or_else(|| "?".into());
    [
        format!(
            "- CPU: {nproc} × {} (`nproc` = {nproc}), {}",
            cpu_model(),
            memory()
        ),
        format!("- OS: {os}, kernel {kernel}, {systemd}"),
        format!("- disk under the ledgers: {}", disk(work)),
        format!("- build: {profile}; user manager: {manager}"),
    ]
    .join("\n")
}
