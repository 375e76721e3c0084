//! `config get|set|unset|show`.

use super::args::ConfigAction;
use super::context::Ctx;
use hermes_cron::config;
use hermes_cron::home::ensure_private_dir;

pub fn config(ctx: &mut Ctx, action: ConfigAction) -> anyhow::Result<i32> {
    let path = ctx.home.config_file();
    match action {
        ConfigAction::Get { key } => {
            // Loading through the context reports each invalid value once,
            // as every other command does; `get` then prints the default.
            ctx.config()?;
            println!("{}", config::get(&path, &key)?)
        }
        ConfigAction::Set { key, value } => {
            ensure_private_dir(ctx.home.root())?;
            config::set(&path, &key, &value)?;
            println!("{key} = {}", config::get(&path, &key)?);
        }
        ConfigAction::Unset { key } => {
            config::unset(&path, &key)?;
            if config::key_table().iter().any(|info| info.name == key) {
                println!("{key} = {} (default)", config::get(&path, &key)?);
            } else {
                // A mistyped key (what `load` warned about), now gone.
                println!("{key} removed");
            }
        }
        ConfigAction::Show => {
            ctx.config()?;
            print!("{}", config::show(&path)?)
        }
    }
    Ok(hermes_cron::exit::OK)
}
