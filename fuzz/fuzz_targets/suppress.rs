//! Suppression comments (`// msgaudit:allow(..)`, `# msgaudit:allow(..)`) scanned
//! from any text, as Rust and as YAML.
#![no_main]

use libfuzzer_sys::fuzz_target;
use msgaudit::source::FileKind;
use msgaudit::suppress::scan;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for kind in [FileKind::Rust, FileKind::Yaml] {
        for s in scan(text, kind) {
            assert!(s.span.byte_start <= s.span.byte_end && s.span.byte_end <= text.len());
        }
    }
});
