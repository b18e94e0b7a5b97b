//! The functions whose result a serverless batch handler returns
//! ([`CrateIndex::batch_returned`]): read from bodies, which the prefilter may parse
//! after the index is built, so computed again every lowering round.

use super::*;

/// How many calls deep a handler's returned result is followed.
const MAX_LEVELS: usize = 6;

impl<'a> CrateFrontEnd<'a> {
    /// `index` with the functions whose result a batch handler returns, as the
    /// bodies parsed so far say; names whose entry changed are noted as changed.
    pub(super) fn with_batch_returned(&mut self, index: Arc<CrateIndex>) -> Arc<CrateIndex> {
        let mut set = lambda::BatchReturned::new();
        // Level 0: the handlers and what they return; each further level, what the
        // functions found so far return (a handler delegating several calls deep),
        // until no function is added.
        for level in 0..MAX_LEVELS {
            let before = (level > 0).then(|| set.clone());
            let of = (level > 0).then(|| Arc::new(set.clone()));
            let pending = self.ask(|_| {
                let of = of.clone();
                move |s: &mut Shard<'a>| timed(Phase::Lower, || s.batch_returned(of.as_deref()))
            });
            let mut found = self.local.batch_returned(of.as_deref());
            for part in self.gather(pending) {
                for (name, owners) in part {
                    found.entry(name).or_default().extend(owners);
                }
            }
            for (name, owners) in found {
                set.entry(name).or_default().extend(owners);
            }
            if set.is_empty() || before.as_ref() == Some(&set) {
                break;
            }
        }
        if set == index.batch_returned {
            return index;
        }
        let old = &index.batch_returned;
        let differ = set
            .keys()
            .chain(old.keys())
            .filter(|k| set.get(*k) != old.get(*k));
        self.changed.batch_returned.extend(differ.cloned());
        let mut index = Arc::unwrap_or_clone(index);
        index.batch_returned = set;
        Arc::new(index)
    }
}

impl<'a> Shard<'a> {
    /// [`lambda::returned_by`] over this shard's files.
    pub(super) fn batch_returned(
        &self,
        of: Option<&lambda::BatchReturned>,
    ) -> lambda::BatchReturned {
        let sl = &self.apis.serverless;
        let mut out = lambda::BatchReturned::new();
        let wrapped = |t: &str| {
            (sl.runtime.event_wrappers.iter())
                .chain(&sl.worker.builders)
                .any(|w| t.contains(w.as_str()))
        };
        for p in self
            .parsed
            .iter()
            .filter(|p| of.is_some() || wrapped(&p.file.text))
        {
            self.isolated(&p.file.path, || {
                let tests = self.include_tests;
                lambda::returned_by(sl, &p.uses, &p.ast.items, tests, of, &mut out);
                // The functions whose result a closure handed to a worker or to the
                // serverless runtime returns.
                for hc in worker::handed_closures(sl, &p.uses, &p.ast.items, tests) {
                    for (owner, name) in lambda::result_sites(&hc.item.block, None).calls {
                        out.entry(name).or_default().insert(owner);
                    }
                }
            });
        }
        out
    }
}
