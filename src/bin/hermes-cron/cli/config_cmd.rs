//! `config get|set|unset|show`.

use super::args::ConfigAction;
use super::context::Ctx;
use hermes_cron::config::{self, Secrets};
use hermes_cron::home::ensure_private_dir;
use serde_json::json;

pub(super) fn config(ctx: &mut Ctx, action: ConfigAction, json: bool) -> anyhow::Result<i32> {
    let path = ctx.home.config_file();
    // Loading through the context reports each invalid value once, as every
    // other command does (`get` then prints the default).
    let line = match action {
        ConfigAction::Get { key, reveal } => {
            ctx.config()?;
            let value = config::get(&path, &key, &ctx.zones, secrets(reveal))?;
            if json {
                json!({ "key": key, "value": value }).to_string()
            } else {
                value
            }
        }
        ConfigAction::Set { key, value } => {
            ensure_private_dir(ctx.home.root())?;
            config::set(&path, &key, &value, &ctx.zones)?;
            // The new file's warnings, e.g. a zone Hermes would not read.
            ctx.config()?;
            let value = config::get(&path, &key, &ctx.zones, Secrets::Masked)?;
            if json {
                json!({ "key": key, "value": value }).to_string()
            } else {
                format!("{key} = {value}")
            }
        }
        ConfigAction::Unset { key } => unset(ctx, &key, json)?,
        ConfigAction::Show { reveal } => {
            ctx.config()?;
            if json {
                let validated = config::read(&path, &ctx.zones)?;
                let unknown: Vec<_> = config::mistyped(&validated)
                    .into_iter()
                    .map(|(key, close)| json!({ "key": key, "did_you_mean": close }))
                    .collect();
                let keys = config::entries(&validated, secrets(reveal));
                serde_json::to_string_pretty(&json!({ "keys": keys, "unknown": unknown }))?
            } else {
                config::show(&path, &ctx.zones, secrets(reveal))?
                    .trim_end()
                    .to_string()
            }
        }
    };
    println!("{line}");
    Ok(hermes_cron::exit::OK)
}

/// Secret keys' values in full only when asked (`--reveal`).
fn secrets(reveal: bool) -> Secrets {
    match reveal {
        true => Secrets::Revealed,
        false => Secrets::Masked,
    }
}

/// `unset KEY`: what the key is now, and why when it is not the default.
fn unset(ctx: &mut Ctx, key: &str, json: bool) -> anyhow::Result<String> {
    let path = ctx.home.config_file();
    config::unset(&path, key)?;
    let Some(info) = config::key_table().into_iter().find(|i| i.name == key) else {
        // A mistyped key (what `load` warned about), now gone.
        return Ok(if json {
            json!({ "key": key, "removed": true, "value": null, "default": null }).to_string()
        } else {
            format!("{key} removed")
        });
    };
    let value = config::get(&path, key, &ctx.zones, Secrets::Masked)?;
    let is_default = value == info.default;
    Ok(if json {
        json!({ "key": key, "removed": true, "value": value, "default": is_default }).to_string()
    } else if is_default {
        format!("{key} = {value} (default)")
    } else {
        // Still given by a merge key (`<<: *anchor`) of its section.
        format!("{key} = {value} (still given by a `<<` merge key in the file)")
    })
}
