//! API knowledge: the packs in `rules/*.toml`, compiled in, plus the config's `[apis]`.

use crate::config::ApiConfig;
use crate::diagnostic::InputError;

#[derive(Debug, Default)]
pub struct Apis {}

impl Apis {
    pub fn with_user(_user: &ApiConfig) -> Result<Apis, InputError> {
        Ok(Apis {})
    }
}
