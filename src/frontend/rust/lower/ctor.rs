//! Calls by path that make an API value: a pack's `paths` entry, or a constructor
//! (the runtime pack's `constructors`) of a type a pack's `[[types]]` gives a role.

use syn::Expr;

use super::{Info, Lowerer};
use crate::apis::{ApiEvent as Api, CallSpec};
use crate::frontend::rust::{constructed_role, resolve_path};
use crate::ir::{KafkaClient, Loc, Node};

impl Lowerer<'_, '_> {
    /// The call `Type::ctor(args)` as the spec of a call making a value of the
    /// role the packs give `Type` (`aws_sdk_firehose::Client::new(&conf)`,
    /// `Sns::new(&c)` with `use aws_sdk_sns::Client as Sns`). A pack's `paths`
    /// entry matching the call keeps priority when it is an event, gives the same
    /// role, names the type's crate, or the path names no crate; a generic entry
    /// (`Client::new`, an HTTP client's) does not take another crate's type.
    /// `None`: not a constructor of such a type.
    /// `path_spec`: the pack's `paths` entry matching the call, if any.
    pub(super) fn constructor_spec(
        &self,
        segs: &[String],
        path_spec: Option<&CallSpec>,
    ) -> Option<CallSpec> {
        let [.., owner, name] = segs else {
            return None;
        };
        if !self.cx.apis.std.constructors.contains(name.as_str())
            || !owner.starts_with(|c: char| c.is_ascii_uppercase())
            || self.is_crate_fn(segs)
        {
            return None;
        }
        let ty = resolve_path(self.cx.uses, &segs[..segs.len() - 1]);
        let (role, qualified) = constructed_role(self.cx.apis, self.cx.uses, self.cx.index, &ty)?;
        if let Some(spec) = path_spec {
            let krate = format!("{}::", ty[0]);
            if !qualified
                || spec.event != Api::None
                || spec.returns.as_deref() == Some(role.as_str())
                || spec.paths.iter().any(|p| p.starts_with(&krate))
            {
                return None;
            }
        }
        Some(CallSpec {
            event: Api::None,
            returns: Some(role),
            ..CallSpec::default()
        })
    }

    /// A call by path the API knows (`spec`): its value, a client configuration's
    /// with what the configuration builds.
    pub(super) fn path_api_call(
        &mut self,
        spec: &CallSpec,
        args: &[&Expr],
        last: &str,
        loc: Loc,
        text: String,
        out: &mut Vec<Node>,
    ) -> Info {
        let mut info = self.api_call(spec, None, args, last, loc.clone(), text, out);
        let role = info.role.as_deref();
        if role.is_some_and(|r| self.cx.apis.config_roles.contains(r)) {
            let family = super::settings::config_family(role);
            info.kafka_config = Some(Box::new(KafkaClient {
                library: Some(spec.pack_name()),
                ..KafkaClient::new(loc, family)
            }));
        }
        info
    }
}
