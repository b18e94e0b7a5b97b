//! Facade crate: services depend on `platform` only.
pub use notify::mailer;

pub mod config {
    pub fn amqp_url() -> String {
        std::env::var("AMQP_URL").unwrap_or_else(|_| "amqp://rabbitmq:5672/%2f".into())
    }
}
