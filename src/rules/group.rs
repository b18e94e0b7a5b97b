//! The shape every rule's findings share: one finding per primary place (where the
//! defect is fixed), the facts seen from the closest entry first (they explain best,
//! with the fewest calls between), and labels unique by place, in order.

use std::collections::BTreeMap;

use crate::diagnostic::Label;
use crate::ir::Loc;

/// The facts grouped by their primary place (in place order), each group sorted by
/// `depth` (the calls between the entry and the events: fewer first), then by the
/// facts' own order.
pub fn by_primary<'a, F: Ord>(
    facts: impl IntoIterator<Item = &'a F>,
    primary: impl Fn(&F) -> &Loc,
    depth: impl Fn(&F) -> usize,
) -> Vec<Vec<&'a F>> {
    let mut groups: BTreeMap<&Loc, Vec<&F>> = BTreeMap::new();
    for f in facts {
        groups.entry(primary(f)).or_default().push(f);
    }
    groups
        .into_values()
        .map(|mut g| {
            g.sort_by(|a, b| (depth(a), a).cmp(&(depth(b), b)));
            g
        })
        .collect()
}

/// A finding's labels: one per place (the first text given for a place stays), sorted.
#[derive(Default)]
pub struct Labels(Vec<Label>);

impl Labels {
    pub fn push(&mut self, loc: &Loc, message: impl Into<String>) {
        if !self
            .0
            .iter()
            .any(|x| x.path == *loc.path && x.span == loc.span)
        {
            self.0.push(Label {
                path: loc.path.to_string(),
                span: loc.span,
                message: message.into(),
            });
        }
    }

    pub fn sorted(mut self) -> Vec<Label> {
        self.0.sort();
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Span;

    fn loc(line: u32) -> Loc {
        Loc {
            path: "src/h.rs".into(),
            span: Span {
                line,
                column: 1,
                end_line: line,
                end_column: 2,
                ..Default::default()
            },
        }
    }

    #[test]
    fn groups_by_primary_place_closest_first() {
        // (primary line, depth, name)
        let facts = [(7, 2, "a"), (3, 1, "b"), (7, 0, "c"), (7, 0, "b")];
        let locs: Vec<Loc> = facts.iter().map(|f| loc(f.0)).collect();
        let indexed: Vec<(usize, usize, &str)> = facts
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.1, f.2))
            .collect();
        let groups = by_primary(&indexed, |f| &locs[f.0], |f| f.1);
        let names: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| g.iter().map(|f| f.2).collect())
            .collect();
        assert_eq!(names, vec![vec!["b"], vec!["c", "b", "a"]]);
    }

    #[test]
    fn one_label_per_place_the_first_text_stays() {
        let mut l = Labels::default();
        l.push(&loc(9), "late");
        l.push(&loc(4), "first");
        l.push(&loc(4), "second");
        let out = l.sorted();
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].span.line, out[0].message.as_str()), (4, "first"));
    }
}
