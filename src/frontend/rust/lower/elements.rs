//! Field values carried by a collection's elements (issue 44): a struct literal, or a
//! value holding fields, pushed into a local collection (`pending.push(InFlight {
//! receipt, task })`, the runtime pack's `store_methods` given one argument) records
//! its fields against the collection; iterating it (`for p in pending`, through the
//! pack's `element_methods`: `pending.drain(..)`, `into_iter()`) binds each element to
//! a value holding them, and an element taken out (`pending.pop()`, the pack's
//! `element_accessors`) holds them, so `p.task.await` (or a method given `p`) reads the
//! pushed literal's `task`. Only when every push agrees on the struct and its fields.

use super::{Info, Lowerer, ValueId};
use syn::Pat;

/// The struct the elements are (when of the crate's) and the value of each field.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Elements {
    crate_type: Option<String>,
    fields: Vec<(String, ValueId)>,
}

impl Lowerer<'_, '_> {
    /// `recv.push(arg)`: the collection's elements hold the fields `arg` holds.
    pub(super) fn push_element(&mut self, recv: Option<ValueId>, args: &[Info]) {
        let Some(r) = recv else { return };
        let pushed = match args {
            [a] => self.fields_held(a),
            _ => None,
        };
        let entry = self.elements.entry(r).or_insert_with(|| pushed.clone());
        let same = match (&*entry, &pushed) {
            (Some(a), Some(b)) => {
                a.crate_type == b.crate_type
                    && a.fields
                        .iter()
                        .map(|f| &f.0)
                        .eq(b.fields.iter().map(|f| &f.0))
            }
            _ => false,
        };
        if !same {
            *entry = None;
        }
    }

    /// The fields a value holds: a struct literal's, or those of a binding of one.
    fn fields_held(&self, a: &Info) -> Option<Elements> {
        let mut fields = a.field_values.clone();
        let mut crate_type = a.crate_type.clone();
        if fields.is_empty() {
            let v = a.value?;
            fields = (self.fields.iter())
                .filter(|((b, _), _)| *b == v)
                .map(|((_, n), f)| (n.clone(), *f))
                .collect();
            crate_type.clone_from(&self.values[v as usize].crate_type);
        }
        fields.sort();
        fields.dedup_by(|x, y| x.0 == y.0);
        (!fields.is_empty()).then_some(Elements { crate_type, fields })
    }

    /// The elements `recv` holds, when every push agreed.
    fn elements_of(&self, recv: Option<ValueId>) -> Option<Elements> {
        self.elements.get(&recv?).cloned().flatten()
    }

    /// `pending.drain(..)`, `pending.into_iter()` (an iterator over the same elements)
    /// or `pending.pop()` (one of them): a value that carries them, or none.
    pub(super) fn element_step(&mut self, name: &str, recv: &Info) -> Option<Info> {
        let els = self.elements_of(recv.value)?;
        let std = &self.cx.apis.std;
        let iterates = std.element_methods.contains(name);
        let takes = std.element_accessors.contains(name) || std.element_takes.contains(name);
        if !iterates && !takes {
            return None;
        }
        let mut info = self.derived(recv);
        info.crate_type.clone_from(&els.crate_type);
        let v = if takes {
            let one = Info {
                field_values: els.fields.clone(),
                crate_type: els.crate_type.clone(),
                ..Info::default()
            };
            self.value_from("", &one)
        } else {
            let v = self.value_from("", &info);
            self.elements.insert(v, Some(els));
            v
        };
        info.value = Some(v);
        Some(info)
    }

    /// `for p in pending`: `p` a value holding the fields every element holds.
    pub(super) fn bind_element(&mut self, pat: &Pat, iter: &Info) -> bool {
        let Pat::Ident(pi) = pat else { return false };
        if pi.subpat.is_some() {
            return false;
        }
        let Some(els) = self.elements_of(iter.value) else {
            return false;
        };
        let one = Info {
            field_values: els.fields,
            crate_type: els.crate_type,
            ..Info::default()
        };
        let v = self.value_from(&pi.ident.to_string(), &one);
        self.bind(&pi.ident.to_string(), v);
        true
    }
}
