//! `hermes install|uninstall`: switching a Hermes home's cron to hermes-cron
//! and back (see the library's `provider::install`).

use super::args::HermesAction;
use super::context::Ctx;
use hermes_cron::home::ensure_private_dir;
use hermes_cron::provider::install;

pub(super) fn hermes(ctx: &mut Ctx, action: HermesAction, json: bool) -> anyhow::Result<i32> {
    let report = match action {
        HermesAction::Install { python } => {
            ensure_private_dir(ctx.home.root())?;
            install::install(&ctx.home, python.as_deref())?
        }
        HermesAction::Uninstall => install::uninstall(&ctx.home)?,
    };
    if json {
        println!("{}", serde_json::json!({ "done": report.lines }));
    } else {
        for line in report.lines {
            println!("{line}");
        }
    }
    Ok(hermes_cron::exit::OK)
}
