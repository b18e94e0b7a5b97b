pub mod postings;
