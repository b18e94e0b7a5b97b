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

use crate::ir::{Crate, Event, EventKind, Function, Loc, ValueId};

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
                    if named.is_empty() {
                        agree(&sites.iter().collect::<Vec<_>>(), loose)
                    } else {
                        agree(&named, loose)
                    }
                }
            };
            let name = channel.and_then(|c| short(f, c));
            let checked = looked
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
            });
        }
    }
    out
}
