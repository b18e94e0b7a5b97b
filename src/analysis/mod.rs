//! Orders delivery events over control flow and runs the rules.

use std::collections::BTreeMap;

use crate::apis::Apis;
use crate::diagnostic::{Finding, InputError};
use crate::source::SourceFile;

pub struct AnalysisInput<'a> {
    pub files: &'a [SourceFile],
    pub apis: &'a Apis,
    pub include_tests: bool,
}

#[derive(Default)]
pub struct AnalysisOutput {
    pub findings: Vec<Finding>,
    pub errors: Vec<InputError>,
    pub skipped: BTreeMap<String, usize>,
    pub analyzed: usize,
}

pub fn analyze(_input: &AnalysisInput) -> AnalysisOutput {
    AnalysisOutput::default()
}
