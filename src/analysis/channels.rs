//! Which channel a RabbitMQ publish goes out on, and whether that channel was put in
//! publisher-confirm mode where it was made (docs/what-is-analyzed.md, unconfirmed publishes: "traced to where the
//! channel is made"). A neutral fact for the rules and the review inventory.
//!
//! A channel is made by a `ChannelOpen` event, which names the value it makes; the
//! binding it first gets names it (`let build_tx = conn.create_channel()…`). A publish
//! on that same value is traced to it directly. A publish on a value from elsewhere
//! (a field, a parameter, a helper's result) is traced by name: the field or
//! parameter `build_tx` to the channels bound as `build_tx`; failing that, to every
//! channel the crate makes, when they all agree. Whatever stays ambiguous is
//! `Unknown`, and a `confirm_select` on a value that is not a channel made in its
//! own function (a helper confirming the channel it is handed) may confirm any
//! channel, so it leaves every channel not confirmed where it was made unknown.
//!
//! A helper that returns a publish's pending confirmation (`-> lapin::Result<
//! PublisherConfirm>`) leaves it to its callers: a caller that awaits the call once
//! and drops the result (`publish_event(..).await?;`) never looks at it.

use super::resolve::Resolver;
use crate::ir::{Crate, Event, EventKind, Function, Loc, ValueId};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every channel the publish may go out on is in confirm mode.
    Confirmed,
    /// Every channel it may go out on is made without confirm mode.
    Unconfirmed,
    /// Not known (no channel made in the crate, or channels that disagree).
    Unknown,
}

/// A publish that can be confirmed (lapin's `basic_publish`), with its channel.
pub struct Publish<'a> {
    pub event: &'a Event,
    pub mode: Mode,
    /// The confirmation is looked at: awaited and checked, or pending confirms are
    /// awaited on the channel afterwards (`wait_for_confirms`).
    pub checked: bool,
    /// Where the channel (or, traced by name, one such channel) is made.
    pub made_at: Option<Loc>,
    /// The index of the publish's function in the crate.
    pub function: usize,
    /// The channel is made in the publish's own function, as the very value it goes
    /// out on (not traced by name).
    pub own: bool,
    /// A call of the publish's function that drops the confirmation it returns.
    pub dropped_at: Option<Loc>,
    /// The confirmation is awaited, but a side where the broker did not take the
    /// message (a nack) logs and goes on as on success.
    pub nack_ignored: bool,
}

struct Site {
    name: String,
    confirmed: bool,
    loc: Loc,
}

/// The last segment of a value's name: `self.channels.build_tx` → `build_tx`.
fn short(f: &Function, v: ValueId) -> Option<&str> {
    let name = f.value_names.get(v as usize)?;
    let last = name.rsplit('.').next().unwrap_or(name);
    (!last.is_empty() && last != "self").then_some(last)
}

fn agree(sites: &[&Site], loose: bool) -> (Mode, Option<Loc>) {
    if sites.is_empty() {
        return (Mode::Unknown, None);
    }
    let first = sites[0].loc.clone();
    if sites.iter().all(|s| s.confirmed) {
        (Mode::Confirmed, Some(first))
    } else if !loose && sites.iter().all(|s| !s.confirmed) {
        (Mode::Unconfirmed, Some(first))
    } else {
        (Mode::Unknown, None)
    }
}

/// Every confirmable publish of the crate, with the confirm mode of its channel.
pub fn publishes(krate: &Crate) -> Vec<Publish<'_>> {
    // Channels made, per function and in the crate.
    let mut sites = Vec::new();
    let mut local: Vec<Vec<(ValueId, usize)>> = Vec::new();
    let mut loose = false;
    // Each function's events, walked once.
    let all: Vec<Vec<&Event>> = krate.functions.iter().map(|f| f.body.events()).collect();
    for (f, events) in krate.functions.iter().zip(&all) {
        let confirmed: Vec<ValueId> = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::ConfirmSelect { channel } => channel,
                _ => None,
            })
            .collect();
        let mut mine = Vec::new();
        for e in events {
            if let EventKind::ChannelOpen { channel } = e.kind {
                mine.push((channel, sites.len()));
                sites.push(Site {
                    name: short(f, channel).unwrap_or_default().to_string(),
                    confirmed: confirmed.contains(&channel),
                    loc: e.loc.clone(),
                });
            }
        }
        loose |= events.iter().any(|e| match e.kind {
            EventKind::ConfirmSelect { channel } => {
                channel.is_none_or(|c| !mine.iter().any(|(v, _)| *v == c))
            }
            _ => false,
        });
        local.push(mine);
    }
    // A confirm on a channel made elsewhere confirms the sites it names.
    for (f, events) in krate.functions.iter().zip(&all) {
        for e in events {
            if let EventKind::ConfirmSelect { channel: Some(c) } = e.kind {
                if let Some(n) = short(f, c) {
                    for s in sites.iter_mut().filter(|s| s.name == n) {
                        s.confirmed = true;
                    }
                }
            }
        }
    }

    let dropped = dropped_confirms(krate, &all);
    let callers = LazyCallers::default();
    let mut out = Vec::new();
    for (fi, (f, events)) in krate.functions.iter().zip(&all).enumerate() {
        let waited: Vec<Option<ValueId>> = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::ConfirmsWaited { channel } => Some(channel),
                _ => None,
            })
            .collect();
        for &e in events {
            let EventKind::Publish {
                confirm: Some(looked),
                channel,
                ..
            } = e.kind
            else {
                continue;
            };
            let own = channel.and_then(|c| local[fi].iter().find(|(v, _)| *v == c));
            let (mode, made_at) = match own {
                Some(&(_, i)) => agree(&[&sites[i]], loose),
                None => {
                    let name = channel.and_then(|c| short(f, c));
                    let named: Vec<&Site> = sites
                        .iter()
                        .filter(|s| name.is_some_and(|n| s.name == n))
                        .collect();
                    let passed = channel.and_then(|c| {
                        callers
                            .get_or_init(krate, &all)
                            .passed(fi, c, &local, &sites)
                    });
                    if let Some(passed) = passed {
                        agree(&passed, loose)
                    } else if named.is_empty() {
                        agree(&sites.iter().collect::<Vec<_>>(), loose)
                    } else {
                        agree(&named, loose)
                    }
                }
            };
            let name = channel.and_then(|c| short(f, c));
            let dropped_at = dropped.get(&e.loc).cloned();
            let checked = (looked && dropped_at.is_none())
                || waited.iter().any(|w| match (w, channel) {
                    (None, _) | (_, None) => true,
                    (Some(w), Some(c)) => *w == c || short(f, *w) == name,
                });
            out.push(Publish {
                event: e,
                mode,
                checked,
                made_at,
                function: fi,
                own: own.is_some(),
                dropped_at,
                nack_ignored: f.confirms_ignored.contains(&e.loc),
            });
        }
    }
    out
}

/// The publishes whose pending confirmation a function returns and one of its
/// callers drops (`Call::confirm_unread`), with that call's place.
fn dropped_confirms(krate: &Crate, all: &[Vec<&Event>]) -> HashMap<Loc, Loc> {
    let mut out = HashMap::default();
    if krate
        .functions
        .iter()
        .all(|f| f.returns_confirms.is_empty())
    {
        return out;
    }
    let resolver = Resolver::new(krate);
    for (f, events) in krate.functions.iter().zip(all) {
        for e in events {
            let EventKind::Call(c) = &e.kind else {
                continue;
            };
            if !c.confirm_unread {
                continue;
            }
            for g in resolver.resolve(f, c) {
                for p in &krate.functions[g].returns_confirms {
                    out.entry(p.clone()).or_insert_with(|| e.loc.clone());
                }
            }
        }
    }
    out
}

/// The calls of each function, by callee, found once when a publish goes out on a
/// parameter.
#[derive(Default)]
struct LazyCallers {
    calls: std::cell::OnceCell<Vec<Vec<(usize, usize)>>>,
}

/// A function's callers: (caller, index of the call event in the caller's events).
struct Callers<'a, 'c> {
    by_callee: &'a [Vec<(usize, usize)>],
    krate: &'c Crate,
    all: &'a [Vec<&'c Event>],
}

impl LazyCallers {
    fn get_or_init<'a, 'c>(
        &'a self,
        krate: &'c Crate,
        all: &'a [Vec<&'c Event>],
    ) -> Callers<'a, 'c> {
        let by_callee = self.calls.get_or_init(|| {
            let resolver = Resolver::new(krate);
            let mut by = vec![Vec::new(); krate.functions.len()];
            for (h, (f, events)) in krate.functions.iter().zip(all).enumerate() {
                for (i, e) in events.iter().enumerate() {
                    if let EventKind::Call(c) = &e.kind {
                        for g in resolver.resolve(f, c) {
                            by[g].push((h, i));
                        }
                    }
                }
            }
            by
        });
        Callers {
            by_callee,
            krate,
            all,
        }
    }
}

impl Callers<'_, '_> {
    /// The channels a parameter `v` of function `fi` is handed by its callers: each
    /// call's argument there, traced to a channel made in the caller or, by name, to
    /// the channels bound under its name. None when `v` is no parameter, nothing calls
    /// the function, or one argument cannot be traced.
    fn passed<'s>(
        &self,
        fi: usize,
        v: ValueId,
        local: &[Vec<(ValueId, usize)>],
        sites: &'s [Site],
    ) -> Option<Vec<&'s Site>> {
        let f = &self.krate.functions[fi];
        let k = f.params.iter().position(|p| *p == Some(v))?;
        if self.by_callee[fi].is_empty() {
            return None;
        }
        let mut out: Vec<&Site> = Vec::new();
        for &(h, i) in &self.by_callee[fi] {
            let EventKind::Call(c) = &self.all[h][i].kind else {
                return None;
            };
            let arg = match (f.has_self, k) {
                (true, 0) => c.receiver,
                (true, k) => c.args.get(k - 1).copied().flatten(),
                (false, k) => c.args.get(k).copied().flatten(),
            }?;
            match local[h].iter().find(|(a, _)| *a == arg) {
                Some(&(_, s)) => out.push(&sites[s]),
                None => {
                    let n = short(&self.krate.functions[h], arg)?;
                    let named: Vec<&Site> = sites.iter().filter(|s| s.name == n).collect();
                    if named.is_empty() {
                        return None;
                    }
                    out.extend(named);
                }
            }
        }
        Some(out)
    }
}
