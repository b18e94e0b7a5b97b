//! `msgaudit.toml` text through the config parser, then the built-in API packs
//! extended with its `[apis]` table, as `msgaudit::check` does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use msgaudit::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = Config::parse(text, "msgaudit.toml") {
        let _ = config.level_for("MA001", "src/lib.rs");
        // Without an `[apis]` table this only parses the built-in packs again.
        if !config.apis.lists.is_empty() {
            let _ = msgaudit::apis::Apis::with_user(&config.apis);
        }
    }
});
