//! The analysis: neutral facts over the model of one crate (`ir`). It reads only
//! the model and the API knowledge; it never parses and never decides a finding.

pub mod channels;
pub mod flow;
pub mod inventory;
pub mod kafka_clients;
pub mod resolve;
pub mod serverless;
