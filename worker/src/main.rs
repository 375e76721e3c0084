fn main() {
    std::process::exit(hermes_cron::exit::OK);
}
