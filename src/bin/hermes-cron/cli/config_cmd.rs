//! `config get|set|unset|show`.

use super::args::ConfigAction;
use super::context::Ctx;
use hermes_cron::config;
use hermes_cron::home::ensure_private_dir;

pub(super) fn config(ctx: &mut Ctx, action: ConfigAction) -> anyhow::Result<i32> {
    let path = ctx.home.config_file();
    match action {
        ConfigAction::Get { key } => {
            // Loading through the context reports each invalid value once,
            // as every other command does; `get` then prints the default.
            ctx.config()?;
            println!("{}", config::get(&path, &key, &ctx.zones)?)
        }
        ConfigAction::Set { key, value } => {
            ensure_private_dir(ctx.home.root())?;
            config::set(&path, &key, &value, &ctx.zones)?;
            // The new file's warnings, e.g. a zone Hermes would not read.
            ctx.config()?;
            println!("{key} = {}", config::get(&path, &key, &ctx.zones)?);
        }
        ConfigAction::Unset { key } => {
            config::unset(&path, &key)?;
            match config::key_table()
                .into_iter()
                .find(|info| info.name == key)
            {
                Some(info) => {
                    let value = config::get(&path, &key, &ctx.zones)?;
                    if value == info.default {
                        println!("{key} = {value} (default)");
                    } else {
                        // Still given by a merge key (`<<: *anchor`) of its section.
                        println!("{key} = {value} (still given by a `<<` merge key in the file)");
                    }
                }
                // A mistyped key (what `load` warned about), now gone.
                None => println!("{key} removed"),
            }
        }
        ConfigAction::Show => {
            ctx.config()?;
            print!("{}", config::show(&path, &ctx.zones)?)
        }
    }
    Ok(hermes_cron::exit::OK)
}
