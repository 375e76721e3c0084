//! `doctor`: a read-only check of the whole home. Each finding names the
//! job (when there is one), what is wrong, and the fix. Gathering reads the
//! database (opened read-only), the heartbeat and the filesystem; every check
//! is a small function of what was gathered and `now`.

pub use super::finding::Finding;
use super::finding::finding;
use super::status::GatewayHealth;
use crate::config::Config;
use crate::db::{Conn, SqlResult};
use crate::db::{JournalMode, from_ms, to_ms};
use crate::job::{Job, JobState};
use crate::ledger::{DispatchMode, ExecState};
use crate::params;
use crate::schedule::{Timestamp, Tz, ZoneOrigin};
use crate::systemd::{Delegation, unenforced};
use chrono::Offset;
use hermes_cron_core::health::{Capability, CapabilityMode};
use hermes_cron_core::run::ReasonCode;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A job overdue by more than this is reported.
pub(crate) const OVERDUE: chrono::Duration = chrono::Duration::minutes(15);
/// A row claimed longer ago than this, and still `claimed`, is stuck.
pub(crate) const STUCK_CLAIM: chrono::Duration = chrono::Duration::minutes(2);
/// How far back `unknown` and degraded rows are looked for.
pub(crate) const RECENT: chrono::Duration = chrono::Duration::days(7);

/// What the checks look at.
pub struct Gathered<'a> {
    pub home_root: &'a Path,
    pub gateway: GatewayHealth,
    pub capability_now: &'a Capability,
    pub config: &'a Config,
    pub jobs: &'a [Job],
    pub journal: Option<&'a JournalMode>,
    /// Paths whose modes are checked: the home, `cron/`, the db, `config.yaml`.
    pub private_paths: Vec<PathBuf>,
    /// Which cgroup controllers the user manager has for scopes.
    pub delegation: &'a Delegation,
    /// The zone rules in use and the zones the jobs use.
    pub zone_rules: &'a ZoneRules,
    /// Whether hermes-cron fires this home's Hermes jobs.
    pub hermes_provider: &'a ProviderState,
    pub now: Timestamp,
}

/// Which zone rules are in use: the host's database, the compiled-in copy,
/// the system zone, and each zone a job uses (the `zone_rules` object of
/// `doctor --json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ZoneRules {
    /// The host's zoneinfo directory (`$TZDIR`, else `/usr/share/zoneinfo`).
    pub host_dir: String,
    /// Whether it holds a zone database; without one every zone is compiled in.
    pub host_present: bool,
    /// Its tz release (`2025b`), when known, and where that was read
    /// (`tzdata.zi`, `+VERSION`, `dpkg`).
    pub host_version: Option<String>,
    pub host_version_from: Option<&'static str>,
    /// The release of the compiled-in copy (the fallback).
    pub compiled_in_version: &'static str,
    /// The zone of jobs without `--tz` when config `timezone` is unset.
    pub system_zone: String,
    /// `TZ`, `/etc/timezone`, `/etc/localtime` or `default`.
    pub system_zone_from: &'static str,
    /// System zone sources that were set but named no zone.
    pub system_zone_refused: Vec<RefusedZone>,
    /// The zone this process reads a job without a zone of its own in:
    /// config `timezone`, else the system zone.
    pub fallback_zone: String,
    /// The zone the running gateway reads such a job in (its heartbeat);
    /// None when no gateway runs, or one of an earlier version.
    pub gateway_zone: Option<String>,
    /// Each zone an active or paused job uses.
    pub zones: Vec<ZoneUse>,
}

/// A zone source that named no zone (`TZ=Mars/Olympus`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RefusedZone {
    pub source: &'static str,
    pub value: String,
    pub reason: String,
}

/// One zone the jobs use, and whose rules serve it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ZoneUse {
    pub name: String,
    /// `host`, `posix` or `compiled_in`.
    pub rules: &'static str,
    /// The names of the jobs in this zone.
    pub jobs: Vec<String>,
    #[serde(skip)]
    pub zone: Tz,
}

/// Whether hermes-cron is the Hermes Agent's cron provider here (the
/// `hermes_provider` object of `doctor --json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ProviderState {
    /// hermes-cron fires Hermes's jobs.
    pub active: bool,
    /// Why not (None when it does).
    pub reason: Option<String>,
    /// The user asked for it: `cron.provider` names hermes-cron, or the plugin is installed.
    pub wanted: bool,
    pub managed_jobs: usize,
    /// Why `cron/jobs.json` cannot be read (while hermes-cron fires its jobs).
    pub jobs_file_error: Option<String>,
    /// Records of `jobs.json` left out, each named.
    pub left_out: Vec<String>,
    /// Why the installed plugin is not the one this binary installs
    /// (another version, changed files), or None.
    pub plugin_drift: Option<String>,
}

/// Provider asked for but not in effect: Hermes's built-in ticker fires
/// its jobs (or nobody does).
fn check_provider(g: &Gathered<'_>) -> Vec<Finding> {
    let p = g.hermes_provider;
    let drift = p.plugin_drift.as_ref().map(|why| {
        finding(
            "hermes_plugin_outdated",
            None,
            format!("{why}: Hermes runs that plugin's code"),
            "run `hermes-cron hermes install` with the hermes-cron you use (it rewrites the plugin and keeps cron.provider)",
        )
    });
    let mut found = check_activation(g);
    found.extend(drift);
    found
}

fn check_activation(g: &Gathered<'_>) -> Vec<Finding> {
    let p = g.hermes_provider;
    match (&p.reason, p.wanted) {
        (Some(why), true) => vec![finding(
            "hermes_provider_inactive",
            None,
            format!("hermes-cron does not fire this home's Hermes jobs: {why}"),
            "do what the problem says (`hermes-cron hermes install` writes the plugin and cron.provider again; `hermes-cron hermes uninstall` gives Hermes's cron back to its built-in ticker for good)",
        )],
        (Some(_), false) => Vec::new(),
        (None, _) => {
            let mut out = Vec::new();
            if let Some(e) = &p.jobs_file_error {
                out.push(finding(
                    "hermes_jobs_unreadable",
                    None,
                    format!(
                        "cannot read Hermes's jobs ({e}): the managed jobs stay as they were, and no change made in Hermes reaches hermes-cron"
                    ),
                    "repair or restore cron/jobs.json (it is Hermes's file; `hermes cron list` shows what Hermes makes of it)",
                ));
            }
            for note in &p.left_out {
                out.push(finding(
                    "hermes_job_left_out",
                    None,
                    format!("{note}; hermes-cron does not fire it"),
                    "fix the record in cron/jobs.json, or remove it and make it again with `hermes cron create` (under hermes-cron no Hermes ticker runs to repair it)",
                ));
            }
            for job in g
                .jobs
                .iter()
                .filter(|j| j.managed && j.state == JobState::Active && j.next_run_at.is_none())
            {
                let hermes_id = job.hermes_id.as_deref().unwrap_or("?");
                out.push(finding(
                    "hermes_job_no_next_run",
                    Some(job),
                    format!(
                        "the Hermes job {hermes_id} is active but has no next run: it will not fire again"
                    ),
                    format!(
                        "fire it now with `hermes-cron run {hermes_id}`, or give it a new schedule with `hermes cron edit {hermes_id} --schedule ...`"
                    ),
                ));
            }
            out
        }
    }
}

/// How far ahead the host's and the compiled-in rules are compared.
pub(crate) const ZONE_HORIZON: chrono::Duration = chrono::Duration::days(731);

impl ZoneRules {
    /// One line for people: `zone rules: host tzdata 2025b (/usr/share/zoneinfo), compiled-in 2025b as fallback`.
    pub fn summary(&self) -> String {
        let host = if self.host_present {
            format!(
                "host tzdata {} ({})",
                self.host_version.as_deref().unwrap_or("of unknown version"),
                self.host_dir
            )
        } else {
            format!("compiled-in only (no zone database at {})", self.host_dir)
        };
        format!(
            "zone rules: {host}, compiled-in {} as fallback; system zone {} (from {})",
            self.compiled_in_version, self.system_zone, self.system_zone_from
        )
    }
}

pub(crate) fn check_gateway(g: &Gathered<'_>) -> Vec<Finding> {
    match g.gateway {
        GatewayHealth::Running => vec![],
        GatewayHealth::NotRunning => vec![finding(
            "gateway_not_running",
            None,
            "no gateway is running on this home: nothing claims due jobs".into(),
            "start it with `hermes-cron gateway`, or install the user unit and `systemctl --user enable --now hermes-cron-gateway.service`",
        )],
        GatewayHealth::Stalled => vec![finding(
            "gateway_stalled",
            None,
            "the gateway's event loop has stopped making progress (its heartbeat counter is stale)"
                .into(),
            "restart it (`systemctl --user restart hermes-cron-gateway.service`); its loop watchdog should do so itself and leave a dump in logs/",
        )],
    }
}

pub(crate) fn check_scope(g: &Gathered<'_>) -> Vec<Finding> {
    if g.capability_now.mode == CapabilityMode::Scoped {
        return vec![];
    }
    let detail = g.capability_now.detail.clone().unwrap_or_default();
    // The cause's text carries the fix too; the finding gives it on its own line.
    let detail = detail
        .split("; fix:")
        .next()
        .unwrap_or_default()
        .to_string();
    vec![finding(
        "scope_unavailable",
        None,
        format!(
            "restart-safe scopes are unavailable ({}): {detail}",
            g.capability_now.cause.map_or("unknown", |c| c.as_str())
        ),
        crate::dispatch::fix_text(),
    )]
}

pub(crate) fn check_overdue(g: &Gathered<'_>) -> Vec<Finding> {
    g.jobs
        .iter()
        .filter(|j| j.state == JobState::Active)
        .filter_map(|j| {
            let due = j.next_run_at?;
            (g.now - due > OVERDUE).then(|| {
                finding(
                    "job_overdue",
                    Some(j),
                    format!("due since {due} and not claimed ({} overdue)", crate::schedule::format_duration((g.now - due).to_std().unwrap_or_default())),
                    "make sure a gateway is running (`hermes-cron status`); it claims overdue slots per the job's catch-up policy",
                )
            })
        })
        .collect()
}

pub(crate) fn check_programs(g: &Gathered<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for j in g.jobs.iter().filter(|j| j.state != JobState::Completed) {
        if let Some(dir) = &j.workdir
            && !dir.is_dir()
        {
            out.push(finding(
                "workdir_missing",
                Some(j),
                format!("its workdir {} does not exist", dir.display()),
                format!("create it, or `hermes-cron edit {} --workdir DIR`", j.id),
            ));
        }
        let Some(missing) = super::program_missing(j, &g.config.cron.path) else {
            continue;
        };
        let program = &j.argv[0];
        out.push(finding(
            "program_missing",
            Some(j),
            match missing {
                super::Missing::NotExecutable => {
                    format!("its program {program:?} is not found or not executable")
                }
                super::Missing::NotOnPath { path } => {
                    format!("its program {program:?} is not found on its PATH {path}")
                }
            },
            format!(
                "install it, add its directory to config cron.path, or `hermes-cron edit {} \
                 -- CMD...` with a full path",
                j.id
            ),
        ));
    }
    out
}

pub(crate) fn check_permissions(g: &Gathered<'_>) -> Vec<Finding> {
    g.private_paths
        .iter()
        .filter_map(|p| {
            let mode = std::fs::metadata(p).ok()?.mode() & 0o777;
            (mode & 0o077 != 0).then(|| {
                let want = if p.is_dir() { "700" } else { "600" };
                finding(
                    "home_permissions",
                    None,
                    format!("{} has mode {mode:04o}: other users can read job commands, environments and outputs", p.display()),
                    format!("chmod {want} {}", p.display()),
                )
            })
        })
        .collect()
}

pub(crate) fn check_journal(g: &Gathered<'_>) -> Vec<Finding> {
    match g.journal {
        Some(JournalMode::Rollback { mode, .. }) => vec![finding(
            "database_not_wal",
            None,
            format!(
                "the ledger uses the {mode} journal, not WAL (WAL is unavailable there, e.g. on a network filesystem): readers block writers, so long reads delay claims and workers' writes, and busy ledgers may fail ticks"
            ),
            format!(
                "move the home ({}) to a local filesystem",
                g.home_root.display()
            ),
        )],
        _ => vec![],
    }
}

/// `01:00` style UTC offset with its abbreviation: `UTC+02:00 (CEST)`.
fn offset_text(offset: crate::schedule::ZoneOffset) -> String {
    let seconds = offset.fix().local_minus_utc();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!(
        "UTC{sign}{:02}:{:02} ({})",
        minutes / 60,
        minutes % 60,
        offset.abbreviation()
    )
}

fn job_names(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(3)
        .map(|n| crate::text::one_line(n, 48))
        .collect();
    match names.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}

/// A zone a job uses whose host rules disagree with the compiled-in copy
/// within [`ZONE_HORIZON`]; a system zone source that names no zone.
pub(crate) fn check_zone_rules(g: &Gathered<'_>) -> Vec<Finding> {
    let rules = g.zone_rules;
    let mut out = Vec::new();
    for refused in &rules.system_zone_refused {
        out.push(finding(
            "system_zone_invalid",
            None,
            format!(
                "{}={:?} is not a time zone ({}); jobs without --tz use {} from {} instead",
                refused.source, refused.value, refused.reason, rules.system_zone, rules.system_zone_from
            ),
            format!(
                "set {} to an IANA name such as Europe/Berlin (or a full POSIX rule such as CET-1CEST,M3.5.0,M10.5.0/3), or unset it; or set config `timezone`",
                refused.source
            ),
        ));
    }
    out.extend(check_gateway_zone(g));
    let host_version = rules
        .host_version
        .as_deref()
        .unwrap_or("of unknown version");
    for used in rules
        .zones
        .iter()
        .filter(|z| z.zone.origin() == ZoneOrigin::Host)
    {
        let Some(compiled) = crate::schedule::compiled_in_zone(used.zone.name()) else {
            continue;
        };
        let Some(d) =
            crate::schedule::first_difference(used.zone, compiled, g.now, g.now + ZONE_HORIZON)
        else {
            continue;
        };
        let when = if d.at <= g.now {
            "now".to_string()
        } else {
            // In UTC: in the zone itself the two rule sets disagree on
            // what the instant reads.
            format!(
                "from {}",
                crate::text::local_time(d.at, crate::schedule::Tz::UTC)
            )
        };
        out.push(finding(
            "zone_rules_differ",
            None,
            format!(
                "the host's rules for {} (tzdata {host_version}, {}) and the compiled-in copy ({}) disagree {when}: host {}, compiled-in {}; hermes-cron uses the host's. Jobs in this zone: {}",
                used.name,
                rules.host_dir,
                rules.compiled_in_version,
                offset_text(d.left),
                offset_text(d.right),
                job_names(&used.jobs)
            ),
            "check `hermes-cron next JOB` gives the times you expect; make sure the gateway reads the same zone database (same TZDIR) and restart it after a tzdata upgrade (`systemctl --user restart hermes-cron-gateway.service`); if the host's rules are the outdated ones, upgrade its tzdata package",
        ));
    }
    out
}

/// Jobs without a zone of their own, read in one zone by this shell and in
/// another by the gateway: their times are not the ones `next` shows here.
fn check_gateway_zone(g: &Gathered<'_>) -> Vec<Finding> {
    let rules = g.zone_rules;
    let Some(gateway) = rules.gateway_zone.as_deref() else {
        return Vec::new();
    };
    if gateway == rules.fallback_zone {
        return Vec::new();
    }
    let unzoned: Vec<&Job> = g
        .jobs
        .iter()
        .filter(|j| j.tz.is_none() && j.state != JobState::Completed)
        .filter(|j| j.schedule != crate::schedule::Schedule::External)
        .collect();
    let Some(first) = unzoned.first() else {
        return Vec::new();
    };
    let names: Vec<String> = unzoned.iter().map(|j| j.name.clone()).collect();
    vec![finding(
        "zone_differs_from_gateway",
        None,
        format!(
            "the gateway reads jobs without a zone of their own in {gateway}, this shell in {}; {} such job(s) ({}) run at other times than `hermes-cron next` shows here",
            rules.fallback_zone,
            names.len(),
            job_names(&names)
        ),
        format!(
            "give each its zone (`hermes-cron edit {} --tz {}`), or set config `timezone` and restart the gateway (`systemctl --user restart hermes-cron-gateway.service`)",
            first.id, rules.fallback_zone
        ),
    )]
}

/// The checks that read the ledger.
pub fn check_ledger(conn: &Conn, g: &Gathered<'_>) -> SqlResult<Vec<Finding>> {
    let mut out = Vec::new();
    let since = to_ms(g.now - RECENT);
    let by_id = |id: &str| g.jobs.iter().find(|j| j.id.as_str() == id);
    // Last terminal run failed, per job.
    for j in g.jobs {
        type Last = (String, String, Option<i32>, Option<i64>, Option<String>);
        let last: Option<Last> = conn.query_opt(
            "SELECT id, state, exit_code, finished_at, reason_code FROM executions
             WHERE job_id = ?1 AND state IN ('succeeded','failed','timed_out','cancelled','unknown')
             ORDER BY id DESC LIMIT 1",
            params![j.id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        let at_text = |at: Option<i64>| at.map_or("-".into(), |a| from_ms(a).to_string());
        if let Some((id, _, _, at, Some(reason))) = &last
            && reason == ReasonCode::DeliveryFailed.as_str()
        {
            out.push(finding(
                "delivery_failed",
                Some(j),
                format!(
                    "its last run {id} ran at {}, but its result was not delivered",
                    at_text(*at)
                ),
                format!(
                    "`hermes-cron logs {id}` shows Hermes's delivery error; set up the platform in Hermes (`hermes gateway setup`) or change the job's `deliver`; end-to-end encrypted rooms (Matrix) need Hermes's running gateway, which a fire outside it cannot use"
                ),
            ));
        } else if let Some((id, state, code, at, _)) = last
            && (state == ExecState::Failed.as_str() || state == ExecState::TimedOut.as_str())
        {
            out.push(finding(
                    "last_run_failed",
                    Some(j),
                    format!(
                        "its last run {id} {state}{} at {}",
                        code.map(|c| format!(" (exit {c})")).unwrap_or_default(),
                        at_text(at)
                    ),
                    format!("`hermes-cron logs {id}` shows its output; `hermes-cron run {} --wait` tries again", j.id),
                ));
        }
    }
    // Unknown rows in the last week.
    let unknown = conn.query_map(
        "SELECT job_id, job_name, COUNT(*) FROM executions
         WHERE state = 'unknown' AND claimed_at >= ?1 GROUP BY job_id, job_name",
        params![since],
        |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        },
    )?;
    for (id, name, n) in unknown {
        let job = id.as_deref().and_then(by_id);
        let mut f = finding(
            "unknown_runs",
            job,
            format!(
                "{n} run(s) in the last 7 days ended `unknown`: their worker or claimer died before recording an outcome"
            ),
            format!(
                "read the reasons with `hermes-cron runs {} --state unknown`; unknown runs are never retried automatically (side effects may have happened)",
                id.as_deref().unwrap_or(&name)
            ),
        );
        if job.is_none() {
            f.job_name = Some(name);
            f.job_id = id;
        }
        out.push(f);
    }
    // Degraded runs where a scope is required now.
    let degraded = conn.query_map(
        "SELECT job_id, COUNT(*) FROM executions
         WHERE dispatch_mode = ?2 AND claimed_at >= ?1 AND job_id IS NOT NULL GROUP BY job_id",
        params![since, DispatchMode::Degraded.as_str()],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
    )?;
    for (id, n) in degraded {
        let Some(j) = by_id(&id) else { continue };
        if j.require_scope || g.config.cron.require_restart_safe_scope {
            out.push(finding(
                "degraded_while_required",
                Some(j),
                format!("{n} run(s) in the last 7 days ran degraded (not restart-safe), though a scope is now required for it"),
                "they ran before the requirement was set, or elsewhere; check `hermes-cron runs` and that scopes work (`hermes-cron status`)",
            ));
        }
    }
    // Rows stuck in claimed.
    let stuck: i64 = conn.query_row(
        "SELECT COUNT(*) FROM executions WHERE state = 'claimed' AND claimed_at < ?1",
        params![to_ms(g.now - STUCK_CLAIM)],
        |r| r.get(0),
    )?;
    if stuck > 0 {
        out.push(finding(
            "stuck_claimed",
            None,
            format!("{stuck} row(s) have been `claimed` for over 2 minutes without a worker adopting them"),
            "restart the gateway (its startup sweep resolves them) or run `hermes-cron tick`, which resolves rows whose claimer died",
        ));
    }
    Ok(out)
}

/// Resource limits the host will not enforce.
fn check_limits(g: &Gathered<'_>) -> Vec<Finding> {
    g.jobs
        .iter()
        .filter(|j| j.state != JobState::Completed)
        .flat_map(|job| {
            unenforced(&job.resources, g.delegation).into_iter().map(move |why| {
                finding(
                    "limit_not_enforced",
                    Some(job),
                    why,
                    "run the gateway where the user manager has the controller delegated (the unified cgroup layout; `cat /sys/fs/cgroup/user.slice/user-$UID.slice/user@$UID.service/cgroup.controllers` lists it), or drop the limit with `hermes-cron edit`",
                )
            })
        })
        .collect()
}

/// Every check that needs no database.
pub fn check_all(g: &Gathered<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(check_limits(g));
    out.extend(check_gateway(g));
    out.extend(check_scope(g));
    out.extend(check_overdue(g));
    out.extend(check_programs(g));
    out.extend(check_permissions(g));
    out.extend(check_journal(g));
    out.extend(check_zone_rules(g));
    out.extend(check_provider(g));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::tzif_fixture::rule_only;
    use crate::schedule::{ZoneFiles, ZoneTable};

    /// A zone database holding the given TZif files.
    struct Files(Vec<(&'static str, Vec<u8>)>);

    impl ZoneFiles for Files {
        fn tzif(&self, name: &str) -> Option<Vec<u8>> {
            self.0
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| b.clone())
        }
        fn names(&self) -> Vec<String> {
            self.0.iter().map(|(n, _)| n.to_string()).collect()
        }
    }

    fn rules(zones: &[(Tz, &[&str])], refused: Vec<RefusedZone>) -> ZoneRules {
        ZoneRules {
            host_dir: "/fixture/zoneinfo".into(),
            host_present: true,
            host_version: Some("2099z".into()),
            host_version_from: Some("tzdata.zi"),
            compiled_in_version: crate::schedule::COMPILED_IN_TZDB_VERSION,
            system_zone: "UTC".into(),
            system_zone_from: "/etc/timezone",
            system_zone_refused: refused,
            fallback_zone: "UTC".into(),
            gateway_zone: None,
            zones: zones
                .iter()
                .map(|(zone, jobs)| ZoneUse {
                    name: zone.name().into(),
                    rules: zone.origin().as_str(),
                    jobs: jobs.iter().map(|j| j.to_string()).collect(),
                    zone: *zone,
                })
                .collect(),
        }
    }

    /// `checks` run on a home with nothing in it but `zone_rules` and `provider`.
    fn run(
        zone_rules: &ZoneRules,
        provider: &ProviderState,
        now: &str,
        checks: fn(&Gathered<'_>) -> Vec<Finding>,
    ) -> Vec<Finding> {
        let config = Config::default();
        let capability = Capability::scoped();
        let delegation = Delegation::Controllers(Vec::new());
        let g = Gathered {
            home_root: Path::new("/home"),
            gateway: GatewayHealth::Running,
            capability_now: &capability,
            config: &config,
            jobs: &[],
            journal: None,
            private_paths: Vec::new(),
            delegation: &delegation,
            zone_rules,
            hermes_provider: provider,
            now: now.parse().unwrap(),
        };
        checks(&g)
    }

    fn not_asked() -> ProviderState {
        ProviderState {
            active: false,
            reason: Some("Hermes's cron.provider is not set".into()),
            wanted: false,
            managed_jobs: 0,
            jobs_file_error: None,
            left_out: Vec::new(),
            plugin_drift: None,
        }
    }

    fn check(zone_rules: &ZoneRules, now: &str) -> Vec<Finding> {
        run(zone_rules, &not_asked(), now, check_zone_rules)
    }

    #[test]
    fn a_provider_asked_for_but_not_in_effect_is_a_finding_and_one_not_asked_for_is_not() {
        let zones = rules(&[], Vec::new());
        let now = "2026-12-01T00:00:00Z";
        assert_eq!(run(&zones, &not_asked(), now, check_provider), []);
        let stale = ProviderState {
            wanted: true,
            reason: Some("Hermes's built-in ticker ran 20s ago".into()),
            ..not_asked()
        };
        let found = run(&zones, &stale, now, check_provider);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "hermes_provider_inactive");
        assert!(found[0].problem.contains("built-in ticker ran 20s ago"));
        let active = ProviderState {
            active: true,
            reason: None,
            wanted: true,
            managed_jobs: 3,
            ..not_asked()
        };
        assert_eq!(run(&zones, &active, now, check_provider), []);
        let troubled = ProviderState {
            jobs_file_error: Some("cron/jobs.json: not JSON".into()),
            left_out: vec!["job #2 has no \"id\"".into()],
            ..active
        };
        let codes: Vec<_> = run(&zones, &troubled, now, check_provider)
            .iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(codes, ["hermes_jobs_unreadable", "hermes_job_left_out"]);
        let outdated = ProviderState {
            plugin_drift: Some("the plugin was installed by hermes-cron 0.0.9".into()),
            ..not_asked()
        };
        let found = run(&zones, &outdated, now, check_provider);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "hermes_plugin_outdated");
        assert!(found[0].fix.contains("hermes-cron hermes install"));
    }

    #[test]
    fn host_rules_that_differ_from_the_compiled_in_copy_are_a_finding() {
        // The host's Berlin is Tokyo; its London follows the same rule as
        // the compiled-in one (no finding).
        let host = ZoneTable::new(Box::new(Files(vec![
            ("Europe/Berlin", rule_only(32_400, "JST", "JST-9")),
            (
                "Europe/London",
                rule_only(0, "GMT", "GMT0BST,M3.5.0/1,M10.5.0"),
            ),
        ])));
        let berlin = host.parse("Europe/Berlin").unwrap();
        let london = host.parse("Europe/London").unwrap();
        let toronto = host.parse("America/Toronto").unwrap(); // compiled in
        let zone_rules = rules(
            &[
                (berlin, &["a", "b", "c", "d"]),
                (london, &["tea"]),
                (toronto, &["t"]),
            ],
            Vec::new(),
        );
        let found = check(&zone_rules, "2026-06-01T00:00:00Z");
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!(f.code, "zone_rules_differ");
        assert!(
            f.problem
                .contains("Europe/Berlin (tzdata 2099z, /fixture/zoneinfo)"),
            "{}",
            f.problem
        );
        assert!(
            f.problem
                .contains("disagree now: host UTC+09:00 (JST), compiled-in UTC+02:00 (CEST)"),
            "{}",
            f.problem
        );
        assert!(
            f.problem.contains("Jobs in this zone: a, b, c and 1 more"),
            "{}",
            f.problem
        );
        assert!(
            f.fix.contains("restart it after a tzdata upgrade"),
            "{}",
            f.fix
        );
    }

    #[test]
    fn a_future_difference_says_when_it_starts() {
        // The host moves Berlin's spring-forward to 02:30 local.
        let host = ZoneTable::new(Box::new(Files(vec![(
            "Europe/Berlin",
            rule_only(3_600, "CET", "CET-1CEST,M3.5.0/2:30,M10.5.0/3"),
        )])));
        let berlin = host.parse("Europe/Berlin").unwrap();
        let found = check(
            &rules(&[(berlin, &["x"])], Vec::new()),
            "2026-01-10T00:00:00Z",
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].problem.contains("disagree from 2026-03-29 01:00:00 UTC: host UTC+01:00 (CET), compiled-in UTC+02:00 (CEST)"),
            "{}",
            found[0].problem
        );
        // After this year's transitions, the next difference is next spring's.
        let found = check(
            &rules(&[(berlin, &["x"])], Vec::new()),
            "2026-04-01T00:00:00Z",
        );
        assert!(
            found[0]
                .problem
                .contains("disagree from 2027-03-28 01:00:00 UTC"),
            "{}",
            found[0].problem
        );
    }

    #[test]
    fn a_refused_system_zone_is_a_finding_naming_the_value() {
        let refused = vec![RefusedZone {
            source: "TZ",
            value: "Mars/Olympus".into(),
            reason: "unknown time zone \"Mars/Olympus\"".into(),
        }];
        let found = check(&rules(&[], refused), "2026-01-10T00:00:00Z");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "system_zone_invalid");
        assert!(
            found[0]
                .problem
                .starts_with("TZ=\"Mars/Olympus\" is not a time zone"),
            "{}",
            found[0].problem
        );
        assert!(found[0].fix.contains("Europe/Berlin"), "{}", found[0].fix);
    }
}
