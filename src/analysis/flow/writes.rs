//! Writes and commits: the pair facts a write makes with what the path did
//! before it, claims still untested, and what a commit makes durable.

use super::*;

impl<'c> Interp<'c> {
    pub(super) fn pair(
        &mut self,
        relation: Relation,
        primary: EvRef,
        other: EvRef,
        related: Vec<(EvRef, String)>,
    ) {
        self.work += 1;
        if !primary.compatible(&other) {
            return;
        }
        let seen = self
            .others_per_primary
            .entry((relation, primary.loc.clone()))
            .or_default();
        if !within_cap(seen, &other.loc) {
            return;
        }
        self.pairs.push(PairFact {
            relation,
            primary,
            other,
            related,
            entry: self.entry.clone(),
        });
    }

    /// An effect after claims whose result was discarded: the effect runs on duplicates too.
    /// Also: the tables of the tested dedup records the effect follows (claims that
    /// gate an effect, [`Facts::claim_tables`]).
    pub(super) fn claims_before(&mut self, st: &mut State, effect: &EvRef) {
        for w in st.writes.iter().filter(|w| w.dedup) {
            if st.unchecked.contains(&w.ev) {
                continue;
            }
            if let Some(ts) = self.write_tables.get(&w.ev.loc) {
                self.claim_tables.extend(ts.iter().cloned());
            }
        }
        for c in st.unchecked.clone() {
            let into_named_table = st.writes.iter().any(|w| w.ev == c && w.named_dedup);
            self.pair(
                Relation::UntestedClaimBeforeEffect {
                    on_message_path: st.message,
                    into_named_table,
                },
                c,
                effect.clone(),
                Vec::new(),
            );
        }
    }

    /// The dedup and effect bookkeeping of a DB write (dedup records and effects, claims, broker transactions).
    pub(super) fn write_pairs(
        &mut self,
        st: &mut State,
        ev: &EvRef,
        (tx, auto): (Option<Val>, bool),
        (dedup, named_dedup, outbox, guarded): (bool, bool, bool, bool),
        unchecked: bool,
    ) {
        if let Some(b) = st.broker_open.clone() {
            self.pair(Relation::InBrokerTransaction, ev.clone(), b, Vec::new());
        }
        let idle_transaction_open = st.txs.values().any(|t| t.open && t.idle);
        let durability = |tx: &Option<Val>, auto: bool| match (tx, auto) {
            (Some(_), _) => Durability::Transaction,
            (None, true) => Durability::Autocommit,
            (None, false) => Durability::Unknown,
        };
        // A dedup record and an effect on one path, with how each becomes durable.
        for w in st.writes.clone() {
            if w.dedup == dedup {
                continue;
            }
            let (d, eff) = if dedup {
                (ev.clone(), w.ev.clone())
            } else {
                (w.ev.clone(), ev.clone())
            };
            let (mine, theirs) = (durability(&tx, auto), durability(&w.tx, w.auto));
            let (dedup_durability, effect_durability) = if dedup {
                (mine, theirs)
            } else {
                (theirs, mine)
            };
            let relation = Relation::DedupAndEffect {
                dedup: dedup_durability,
                effect: effect_durability,
                same_transaction: tx.is_some() && w.tx == tx,
                effect_guarded: guarded || w.guarded,
                effect_to_outbox: outbox,
                idle_transaction_open,
            };
            self.pair(relation, d, eff, Vec::new());
        }
        if dedup && unchecked {
            st.unchecked.insert(ev.clone());
        } else if !dedup && !outbox {
            self.claims_before(st, ev);
        }
        if dedup && !outbox {
            st.dedup_written();
        }
        if !outbox {
            st.writes.insert(WriteRec {
                ev: ev.clone(),
                tx,
                auto,
                dedup,
                named_dedup,
                guarded,
            });
        }
    }

    /// A write to a store outside SQL that is durable when the call returns
    /// (`ExternalKind::Store`): a database change apart from any publish on this
    /// path, as an autocommit SQL write is.
    pub(super) fn store_write(&mut self, st: &mut State, ev: &EvRef) {
        let change = Applied::new(ev.clone(), st);
        self.durable_change(st, change, ev);
    }

    /// `change`, made durable by `ev` outside any transaction: a database change
    /// apart from every publish live on this path, and from those that follow.
    pub(super) fn durable_change(&mut self, st: &mut State, change: Applied, ev: &EvRef) {
        for p in live_publishes(st) {
            self.pair(
                Relation::PublishApartFromDbChange {
                    change_in_broker_transaction: change.in_broker_transaction,
                    change_deletes_only: change.deletes_only,
                    change_after_publish: true,
                },
                p,
                ev.clone(),
                Vec::new(),
            );
        }
        st.durable.insert(change);
    }

    pub(super) fn commit(&mut self, st: &mut State, tx: Val, ev: EvRef) {
        let Some(t) = st.txs.get(&tx).cloned() else {
            return;
        };
        if t.open {
            let tables = self.commit_tables.entry(ev.loc.clone()).or_default();
            for w in &t.writes {
                if let Some(ts) = self.write_tables.get(&w.loc) {
                    tables.extend(ts.iter().cloned());
                }
            }
        }
        if t.open && t.known && !t.outbox {
            // The transaction's writes become durable: a database change apart from
            // any publish on this path.
            let commit = Applied::new(ev.clone(), st).deleting(!t.non_delete);
            for p in live_publishes(st) {
                self.pair(
                    Relation::PublishApartFromDbChange {
                        change_in_broker_transaction: commit.in_broker_transaction,
                        change_deletes_only: commit.deletes_only,
                        change_after_publish: true,
                    },
                    p,
                    ev.clone(),
                    t.begin
                        .iter()
                        .map(|b| (b.clone(), "transaction begins here".into()))
                        .collect(),
                );
            }
            st.durable.insert(commit);
        }
        if t.open {
            // Rows it retired are retired now.
            let committed: Vec<Retiring> = st
                .retiring
                .iter()
                .filter(|r| r.tx == Some(tx))
                .cloned()
                .collect();
            for mut r in committed {
                st.retiring.shift_remove(&r);
                r.tx = None;
                st.retiring.insert(r);
            }
            union(&mut st.nonidem, &t.nonidem);
            if !t.writes.is_empty() {
                self.note_effect(st);
            }
        }
        if t.open && !t.writes.is_empty() {
            let pend: Vec<Pending> = st.acks.values().cloned().collect();
            for p in &pend {
                self.fact(
                    p,
                    t.writes[0].clone(),
                    EffectKind::Committed {
                        begin: t.begin.clone().map(Box::new),
                        commit: Box::new(ev.clone()),
                    },
                );
            }
            if self.tasks > 0 && !st.before_recv {
                st.effects.extend(t.writes.iter().cloned());
            }
        }
        st.txs.remove(&tx);
    }
}
