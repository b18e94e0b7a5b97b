pub use store::profiles;
